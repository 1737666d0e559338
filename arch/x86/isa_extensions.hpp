// Which instruction-set extensions a piece of machine code uses (what an emulator that lacks
// one would stumble on). A linear sweep: bytes that do not decode are stepped over one by one.
#pragma once

#include <cstdint>
#include <span>

#include "arch/x86/isa.hpp"

namespace arch::x86 {

// True when code of instruction set isa holds an EVEX-encoded (AVX-512) instruction.
bool uses_avx512(std::span<const std::uint8_t> code, Isa isa);

}  // namespace arch::x86
