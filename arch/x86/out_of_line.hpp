// Running an instruction somewhere other than where it lives: the bytes of a slot that runs a
// copy of it, then jumps back to the instruction after the original. How a breakpoint whose
// condition is false is passed without a second stop and without stopping the other threads
// (the int3 stays in place). Pure: bytes in, bytes out.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "arch/x86/isa.hpp"

namespace arch::x86 {

// The longest slot: an instruction (15 bytes) and the absolute jump back (14).
inline constexpr std::size_t kMaxSlotLength = 29;

struct OutOfLineSlot {
  // The copy, then the jump to the instruction after the original: `jmp [rip+0]` and the
  // address (64-bit code), `jmp rel32` (32-bit code, where every address is in reach).
  std::vector<std::uint8_t> bytes;
  std::uint8_t length = 0;          // of the instruction copied
};

// The instruction at the start of code, which lives at `from`, as a copy at `at` runs it: an
// operand relative to rip rebased so that it reaches what it reached. Nothing if a copy would
// not do the same: a branch, call, return, syscall, trap or ud2, or a rip-relative operand
// whose target is more than 2 GiB from `at`.
std::optional<std::vector<std::uint8_t>> relocated_copy(std::span<const std::uint8_t> code, std::uint64_t from,
                                                       std::uint64_t at, Isa isa = Isa::Amd64);

// The slot at `at` for the instruction at the start of code, which lives at `from`; an operand
// relative to rip is rebased so that it reaches what it reached. Nothing if a copy would not do
// the same: a branch, call, return, syscall, trap or ud2 (those are stepped in place), or a rip-
// relative operand whose target is more than 2 GiB from `at`. 32-bit code has no rip-relative
// operands: a copy is the same instruction.
std::optional<OutOfLineSlot> out_of_line_slot(std::span<const std::uint8_t> code, std::uint64_t from,
                                              std::uint64_t at, Isa isa = Isa::Amd64);

}  // namespace arch::x86
