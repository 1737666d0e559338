// x86 near control transfers (of 64-bit code and of i386 code) performed outside the CPU, for
// SoftEmulate: the tracer plants an int3 on a branch, and at the trap decodes it once
// (decode_branch) and performs it on the thread's registers and stack (emulate_branch) instead
// of letting the CPU run it. Pure: bytes, registers and a small memory interface in; registers
// (and a pushed return address) out. Registers are always the 64-bit user_regs_struct words,
// as a 64-bit tracer sees an i386 thread too.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>

#include "arch/x86/register_layout.hpp"
#include "base/result.hpp"

namespace arch::x86 {

enum class BranchKind : std::uint8_t {
  Jcc,     // conditional on RFLAGS
  Jcxz,    // jrcxz / jecxz: taken when the counter is zero
  Loop,    // loop / loope / loopne: the counter -= 1, taken while non-zero (and ZF as asked)
  Loope,
  Loopne,
  Jmp,
  Call,    // pushes the address of the next instruction
  Ret,     // pops the target, then `pop` more bytes (ret imm16)
};

// The sixteen jcc conditions, in opcode order (0x70 + n).
enum class Condition : std::uint8_t { O, NO, B, AE, E, NE, BE, A, S, NS, P, NP, L, GE, LE, G };

// Where a jmp or call finds its target.
enum class TargetKind : std::uint8_t {
  Relative,  // next instruction + rel
  Register,  // a general register
  Memory,    // a word (the code's word size) at an effective address
};

// An effective address: segment base + base + index * scale + disp, truncated to
// address_bits. base may be kRip (RIP-relative: the next instruction's address).
struct MemoryOperand {
  int base = -1;             // GprWord, or -1
  int index = -1;            // GprWord, or -1
  std::uint8_t scale = 1;
  std::int64_t disp = 0;
  int segment_base = -1;     // kFsBase or kGsBase for fs:/gs:, else -1
  std::uint8_t address_bits = 64;
};

struct BranchInstruction {
  BranchKind kind = BranchKind::Jmp;
  Condition cond = Condition::O;     // Jcc
  std::uint8_t length = 0;
  TargetKind target = TargetKind::Relative;
  std::int64_t rel = 0;              // Relative
  int reg = -1;                      // Register: GprWord
  MemoryOperand mem;                 // Memory
  std::uint16_t pop = 0;             // Ret: extra bytes released
  std::uint8_t counter_bits = 64;    // Jcxz, Loop*: rcx (64) or ecx (32)
  std::uint8_t word_bytes = 8;       // return addresses, memory targets and the pc: 8, or 4 in i386 code
  bool operator==(const BranchInstruction&) const = default;
};

// The branch at the start of code of instruction set isa, when it is one this emulator
// performs exactly: near jcc, jmp, call, ret (and ret imm16), loop/loope/loopne with the
// code's own counter, jrcxz/jecxz. Nothing for anything else (far transfers, iret, sysret,
// 16-bit operand or counter sizes, a counter of the other width, invalid bytes, and in i386
// code a target read through fs: or gs:, whose base lives in a descriptor): those are
// single-stepped by the CPU.
std::optional<BranchInstruction> decode_branch(std::span<const std::uint8_t> code, Isa isa);

// The words the emulation reads (indirect targets, return addresses) and writes (the return
// address a call pushes): `bytes` (8, or 4 for i386 code) little-endian, zero-extended.
class BranchMemory {
 public:
  virtual ~BranchMemory() = default;
  virtual base::Result<std::uint64_t> read_word(std::uint64_t addr, std::size_t bytes) = 0;
  virtual base::Result<void> write_word(std::uint64_t addr, std::uint64_t value, std::size_t bytes) = 0;
};

using Gprs = std::array<std::uint64_t, kGprWords>;  // user_regs_struct order (GprWord)

// Does the condition hold for these flags?
bool condition_holds(Condition cond, std::uint64_t rflags);

struct BranchOutcome {
  bool taken = false;     // a jcc/loop/jcxz that fell through: false
  std::uint64_t next = 0; // where the thread goes on (rip afterwards)
};

// Performs insn, located at pc, on gpr: rip, and rsp / rcx where the instruction changes them
// (in i386 code each wraps at 32 bits), the return address of a call pushed through mem. On error (a memory operand or the stack
// that cannot be read or written) gpr and memory are left as they were: the CPU, running the
// instruction itself, would fault.
base::Result<BranchOutcome> emulate_branch(const BranchInstruction& insn, std::uint64_t pc, Gprs& gpr,
                                           BranchMemory& mem);

}  // namespace arch::x86
