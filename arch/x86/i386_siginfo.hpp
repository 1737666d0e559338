// siginfo_t of an i386 program: the kernel hands a 64-bit tracer its 64-bit layout
// (PTRACE_GETSIGINFO), GDB reads $_siginfo in the program's own (4-byte pointers and longs,
// the union at offset 12), as the kernel would deliver it to a 32-bit handler. Which union
// member holds data follows the kernel's rule (siginfo_layout): by si_code, then by signal.
// Pure: bytes in, bytes out.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "arch/x86/isa.hpp"

namespace arch::x86 {

inline constexpr std::size_t kSiginfoSize = 128;
using SiginfoBytes = std::array<std::uint8_t, kSiginfoSize>;

// Where si_addr (the union's first word) is in the layout a program of `isa` sees.
inline std::size_t siginfo_address_offset(Isa isa) { return isa == Isa::I386 ? 12 : 16; }

// The 64-bit layout as the i386 one; fields of the layout that do not apply read as zeros.
SiginfoBytes i386_siginfo_from_native(const SiginfoBytes& native);
// And back: the i386 layout (as GDB wrote it) as the 64-bit one, pointers zero-extended and
// longs sign-extended.
SiginfoBytes native_siginfo_from_i386(const SiginfoBytes& i386);

}  // namespace arch::x86
