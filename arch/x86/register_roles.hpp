// Which GDB register numbers play the parts a debug server cares about (program counter, stack
// and frame pointers, flags) for the instruction set a thread runs, so that nothing above
// arch/ names a register number.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "arch/x86/isa.hpp"

namespace arch::x86 {

struct RegisterRoles {
  int pc = 0;
  int sp = 0;
  int fp = 0;
  int flags = 0;
  std::uint32_t word_bytes = 0;  // size of pc, sp and fp in `g`
  // What gdbserver expedites in a stop reply so GDB can unwind without a `g`: fp, sp, pc.
  std::array<int, 3> expedited{};
};

RegisterRoles register_roles(Isa isa);

// A little-endian register value (as `p` returns it) as an address; nullopt when it is not
// word_bytes long.
std::optional<std::uint64_t> address_value(const RegisterRoles& roles, std::span<const std::uint8_t> bytes);
// The other way: an address as the word_bytes of a pc, sp or fp register.
std::vector<std::uint8_t> address_bytes(const RegisterRoles& roles, std::uint64_t value);

}  // namespace arch::x86
