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

struct OutOfLineSlot {
  std::vector<std::uint8_t> bytes;  // the copy, then `jmp [rip+0]` to the instruction after the original
  std::uint8_t length = 0;          // of the instruction copied
};

// The slot at `at` for the instruction at the start of code, which lives at `from`; an operand
// relative to rip is rebased so that it reaches what it reached. Nothing if a copy would not do
// the same: a branch, call, return, syscall, trap or ud2 (those are stepped in place), or a rip-
// relative operand whose target is more than 2 GiB from `at`.
std::optional<OutOfLineSlot> out_of_line_slot(std::span<const std::uint8_t> code, std::uint64_t from,
                                              std::uint64_t at);

}  // namespace arch::x86
