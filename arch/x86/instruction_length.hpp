// x86-64 and i386 instruction lengths and the little a single-stepping tracer must know about each
// instruction to tell a taken branch from sequential execution (btrace.md §10). Pure: bytes in.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "arch/x86/isa.hpp"

namespace arch::x86 {

// The most bytes one instruction may span (a longer one raises #GP), in either mode.
inline constexpr std::size_t kMaxInstructionLength = 15;

enum class InsnKind : std::uint8_t {
  Plain,      // falls through to the next instruction
  Branch,     // jmp, jcc, call, ret, loop, jrcxz, far transfers, iret: may target itself
  RepString,  // rep/repe/repne string instruction: one step per iteration, pc unchanged
  Syscall,    // syscall, sysenter, int 0x80: not a branch (rt_sigreturn lands elsewhere)
  Trap,       // int3, int n, int1, into: the trap is the program's own signal
};

// What a Branch does to the call stack, whether or not it can be emulated.
enum class StackEffect : std::uint8_t {
  None,    // jmp, jcc, loop, ...
  Call,    // call (near or far): pushes a return address
  Return,  // ret, lret, iret
};

struct InstructionInfo {
  std::uint8_t length = 0;
  InsnKind kind = InsnKind::Plain;
  StackEffect stack = StackEffect::None;
  bool operator==(const InstructionInfo&) const = default;
};

// Decodes the instruction at the start of code, as 64-bit or 32-bit code (up to
// kMaxInstructionLength bytes are looked at; fewer when code is shorter). Nothing when the bytes
// are not a valid instruction.
std::optional<InstructionInfo> decode_instruction(std::span<const std::uint8_t> code, Isa isa = Isa::Amd64);

// After single-stepping the instruction `insn` at `from`, the thread is at `to`: was that a
// taken control transfer? Sequential successors, rep iterations and a pc left unchanged by an
// instruction that cannot target itself (a restarted syscall, a trap before execution) are not.
// A syscall that lands elsewhere (rt_sigreturn) is.
bool step_took_branch(const InstructionInfo& insn, std::uint64_t from, std::uint64_t to);

}  // namespace arch::x86
