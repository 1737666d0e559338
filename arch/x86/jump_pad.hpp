// Fast tracepoints (x86-64): the 5-byte `jmp rel32` that replaces the instruction at a
// tracepoint, and the jump pad it goes to. The pad saves the thread's whole state, calls the
// in-process agent's collector, restores everything, runs the moved instruction (relocated),
// and jumps back after it. Pure: bytes in, bytes out.
//
// What the collector is called with (System V: rdi, rsi, rdx, rcx):
//   (index, saved, save_area, tracepoint address)
// `saved` points at 16 words: r15 r14 r13 r12 rbp rbx r11 r10 r9 r8 rax rcx rdx rsi rdi (the
// first 15 of user_regs_struct, in its order), then rflags; the thread's rsp was
// saved + 16 words + 128 (its red zone is left alone). `save_area` is the XSAVE (or FXSAVE)
// image of the rest, in the standard format ptrace's NT_X86_XSTATE gives.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace arch::x86 {

inline constexpr std::size_t kJumpLength = 5;  // jmp rel32
inline constexpr std::size_t kRedZone = 128;
inline constexpr std::size_t kSavedWords = 16;

struct JumpPadRequest {
  std::uint64_t tracepoint = 0;              // the instruction's address
  std::span<const std::uint8_t> code;        // its bytes (and what follows: up to 15 looked at)
  std::uint64_t pad = 0;                     // where the pad will live
  std::uint64_t index = 0;                   // the collector's first argument
  std::uint64_t collector = 0;               // its address
  std::uint32_t save_area = 0;               // XSAVE area bytes (0: no XSAVE, FXSAVE's 512)
  std::uint64_t save_mask = 0;               // the XSAVE components to save and restore
  bool xsaveopt = false;                     // XSAVEOPT (components in their initial state skipped)
};

struct JumpPad {
  std::vector<std::uint8_t> pad;
  std::array<std::uint8_t, kJumpLength> jump{};  // what goes over the instruction
  std::uint8_t moved = 0;                         // the instruction's length (at least 5)
};

// Nothing when a jump cannot stand there: the instruction is shorter than the jump or cannot
// run elsewhere (returns, indirect branches, syscalls, traps), or the pad is out of a rel32's
// reach of it. Calls and relative jumps are moved with their targets kept (a call pushes the
// original return address).
std::optional<JumpPad> amd64_jump_pad(const JumpPadRequest& request);

}  // namespace arch::x86
