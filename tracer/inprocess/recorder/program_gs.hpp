// The program's own %gs. The recorder keeps each thread's block at the real %gs base
// (thread_state.hpp), so the program's base lives in the block (app_gs) while the thread runs in
// the cache, and the program's uses of %gs are translated to it:
//   - rdgsbase r: mov r, gs:[app_gs]; wrgsbase r: mov gs:[app_gs], r (a 32-bit one zero-extended);
//   - an operand through %gs: the real base swapped for the program's around the copy, with two
//     registers the instruction does not use (wrgsbase: where the kernel allows FSGSBASE);
//   - arch_prctl's ARCH_SET_GS and ARCH_GET_GS: at the maps gate (recorder.cpp, program_gs_call);
//   - a way out to native code sets the program's base first (emit_native_exit), and the server
//     takes a base the program set there as its own.
// What cannot be translated (a branch through %gs, a move to the segment register itself, an
// operand through %gs without FSGSBASE) leaves for native code.
#pragma once

#include <Zydis/Zydis.h>

#include <cstdint>

#include "tracer/inprocess/recorder/emitter.hpp"

namespace recorder {

enum class GsUse {
  none,        // the instruction does not touch %gs
  base_move,   // rdgsbase or wrgsbase: emit_gs_base_move
  operand,     // a memory operand through %gs: emit_gs_swap_in, the copy, emit_gs_swap_out
  native,      // to be run natively
};

// How insn (with all its operands, hidden ones included) uses %gs. fsgsbase: the kernel lets
// the program run wrgsbase (AT_HWCAP2).
GsUse gs_use(const ZydisDecodedInstruction& insn, const ZydisDecodedOperand* operands, bool fsgsbase);
// The translation of rdgsbase or wrgsbase.
void emit_gs_base_move(Emitter& e, const ZydisDecodedInstruction& insn, const ZydisDecodedOperand* operands);
// Two registers insn does not use (nor rsp, nor rbp), for the swap: saved in the block, then the
// real %gs base is the program's until emit_gs_swap_out puts the block's back and restores them.
struct GsSwap {
  Reg program_base, block;
};
GsSwap gs_swap_registers(const ZydisDecodedInstruction& insn, const ZydisDecodedOperand* operands);
void emit_gs_swap_in(Emitter& e, GsSwap swap);
void emit_gs_swap_out(Emitter& e, GsSwap swap);
// Where the thread goes natively: the real %gs base made the program's (no register, flag or
// byte of the program's stack within its red zone changed). Only with FSGSBASE.
void emit_program_gs_for_native(Emitter& e);

// arch_prctl(code, arg) made at the maps gate for a thread whose block is `t`: ARCH_SET_GS and
// ARCH_GET_GS act on the program's base as the kernel would (its checks and its -EFAULT, by
// the kernel's own calls made on the real base, the block's put back after); true if it was
// one of them, the result in *result.
struct ThreadState;
bool program_gs_call(ThreadState& t, std::uint64_t code, std::uint64_t arg, std::uint64_t* result);

}  // namespace recorder
