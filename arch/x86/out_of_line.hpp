// Running an instruction somewhere other than where it lives: the bytes of a slot that runs a
// copy of it, then jumps back to the instruction after the original. How a breakpoint whose
// condition is false is passed without a second stop and without stopping the other threads
// (the int3 stays in place). Pure: bytes in, bytes out.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace arch::x86 {

// The longest slot: an instruction (15 bytes) and the absolute jump back (14).
inline constexpr std::size_t kMaxSlotLength = 29;

// The length of the instruction at the start of code if a copy of it does the same wherever it
// runs: not a branch, call, return, syscall or trap, and no operand relative to rip. Nothing
// otherwise (those are stepped in place).
std::optional<std::uint8_t> relocatable_length(std::span<const std::uint8_t> code);

// The slot for insn (a relocatable instruction) that lived at `from`: the copy, then
// `jmp [rip+0]` to from + insn.size().
std::vector<std::uint8_t> out_of_line_slot(std::span<const std::uint8_t> insn, std::uint64_t from);

}  // namespace arch::x86
