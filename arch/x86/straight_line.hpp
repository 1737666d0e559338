// How far code runs with nothing but fall-through: where a range step may let the thread run
// at full speed to a temporary int3 instead of stepping each instruction. Pure: bytes in.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "arch/x86/isa.hpp"

namespace arch::x86 {

// The offset in code of the first instruction that may not fall through to the next (a
// branch, call, return, syscall or trap) or that does not decode whole inside code; code.size()
// when every instruction falls through. Rep string instructions fall through (in the end).
std::size_t straight_line_length(std::span<const std::uint8_t> code, Isa isa = Isa::Amd64);

}  // namespace arch::x86
