#include "tracer/inprocess/recorder/program_gs.hpp"

#include <asm/prctl.h>

#include "tracer/inprocess/recorder/sys.hpp"
#include "tracer/inprocess/recorder/thread_state.hpp"

namespace recorder {
namespace {

// The general-purpose register number (0..15) of a 64-bit-enclosed register, -1 for others.
int gpr_number(ZydisRegister reg) {
  const ZydisRegister full = ZydisRegisterGetLargestEnclosing(ZYDIS_MACHINE_MODE_LONG_64, reg);
  if (full < ZYDIS_REGISTER_RAX || full > ZYDIS_REGISTER_R15) {
    return -1;
  }
  return static_cast<int>(full - ZYDIS_REGISTER_RAX);
}

// wrgsbase reg (64-bit)
void wrgsbase(Emitter& e, Reg reg) {
  e.bytes({0xf3, static_cast<std::uint8_t>(0x48 | (reg >> 3)), 0x0f, 0xae, static_cast<std::uint8_t>(0xd8 | (reg & 7))});
}

}  // namespace

GsUse gs_use(const ZydisDecodedInstruction& insn, const ZydisDecodedOperand* operands, bool fsgsbase) {
  if (insn.mnemonic == ZYDIS_MNEMONIC_RDGSBASE || insn.mnemonic == ZYDIS_MNEMONIC_WRGSBASE) {
    return GsUse::base_move;
  }
  bool through_gs = (insn.attributes & ZYDIS_ATTRIB_HAS_SEGMENT_GS) != 0;
  for (std::uint8_t i = 0; i < insn.operand_count; ++i) {
    const ZydisDecodedOperand& op = operands[i];
    if (op.type == ZYDIS_OPERAND_TYPE_REGISTER && op.reg.value == ZYDIS_REGISTER_GS) {
      return GsUse::native;  // the selector itself (mov to %gs resets the base)
    }
    through_gs = through_gs || (op.type == ZYDIS_OPERAND_TYPE_MEMORY && op.mem.segment == ZYDIS_REGISTER_GS);
  }
  if (!through_gs) {
    return GsUse::none;
  }
  if (!fsgsbase || insn.meta.category == ZYDIS_CATEGORY_UNCOND_BR || insn.meta.category == ZYDIS_CATEGORY_CALL ||
      insn.meta.category == ZYDIS_CATEGORY_COND_BR || insn.meta.category == ZYDIS_CATEGORY_RET) {
    return GsUse::native;
  }
  return GsUse::operand;
}

void emit_gs_base_move(Emitter& e, const ZydisDecodedInstruction& insn, const ZydisDecodedOperand* operands) {
  const Reg reg = static_cast<Reg>(gpr_number(operands[0].reg.value));
  const std::int32_t field = gs_offset(&slots().app_gs);
  const bool wide = insn.operand_width == 64;
  const bool to_base = insn.mnemonic == ZYDIS_MNEMONIC_WRGSBASE;
  // mov [gs:app_gs], reg / mov reg, [gs:app_gs], 64- or 32-bit (a 32-bit load zero-extends)
  const std::uint8_t rex = static_cast<std::uint8_t>((wide ? 0x48 : 0x40) | ((reg >> 3) << 2));
  e.bytes({0x65});
  if (rex != 0x40) {
    e.bytes({rex});
  }
  e.bytes({static_cast<std::uint8_t>(to_base ? 0x89 : 0x8b), static_cast<std::uint8_t>(((reg & 7) << 3) | 4), 0x25});
  e.u32(static_cast<std::uint32_t>(field));
  if (to_base && !wide) {
    e.bytes({0x65, 0xc7, 0x04, 0x25});  // mov dword gs:[app_gs + 4], 0
    e.u32(static_cast<std::uint32_t>(field + 4));
    e.u32(0);
  }
}

GsSwap gs_swap_registers(const ZydisDecodedInstruction& insn, const ZydisDecodedOperand* operands) {
  bool used[16] = {};
  used[kRsp] = used[5] = true;  // (rsp, rbp)
  auto mark = [&](ZydisRegister reg) {
    if (const int n = gpr_number(reg); n >= 0) {
      used[n] = true;
    }
  };
  for (std::uint8_t i = 0; i < insn.operand_count; ++i) {
    const ZydisDecodedOperand& op = operands[i];
    if (op.type == ZYDIS_OPERAND_TYPE_REGISTER) {
      mark(op.reg.value);
    } else if (op.type == ZYDIS_OPERAND_TYPE_MEMORY) {
      mark(op.mem.base);
      mark(op.mem.index);
    }
  }
  Reg free[2] = {kRax, kRax};
  int found = 0;
  for (int n = 0; n < 16 && found < 2; ++n) {
    if (!used[n]) {
      free[found++] = static_cast<Reg>(n);
    }
  }
  return {free[0], free[1]};  // (an instruction names at most a few registers: two are always free)
}

void emit_gs_swap_in(Emitter& e, GsSwap swap) {
  e.store_gs(&slots().gs_save[0], swap.program_base);
  e.store_gs(&slots().gs_save[1], swap.block);
  e.load_gs(swap.program_base, &slots().app_gs);
  e.load_gs(swap.block, &slots().self);
  wrgsbase(e, swap.program_base);
}

void emit_gs_swap_out(Emitter& e, GsSwap swap) {
  wrgsbase(e, swap.block);
  e.load_gs(swap.program_base, &slots().gs_save[0]);
  e.load_gs(swap.block, &slots().gs_save[1]);
}

void emit_program_gs_for_native(Emitter& e) {
  e.bytes({0x48, 0x8d, 0x64, 0x24, 0x80});  // lea rsp, [rsp-128]: below the red zone
  e.bytes({0x50});                          // push rax
  e.load_gs(kRax, &slots().app_gs);
  wrgsbase(e, kRax);
  e.bytes({0x58});                                // pop rax
  e.bytes({0x48, 0x8d, 0xa4, 0x24, 0x80, 0, 0, 0});  // lea rsp, [rsp+128]
}

bool program_gs_call(ThreadState& t, std::uint64_t code, std::uint64_t arg, std::uint64_t* result) {
  if (code != ARCH_SET_GS && code != ARCH_GET_GS) {
    return false;
  }
  const auto block = reinterpret_cast<std::uint64_t>(&t);
  if (code == ARCH_SET_GS) {
    const long r = sys::arch_prctl(ARCH_SET_GS, arg);  // (the kernel's checks of the address)
    sys::arch_prctl(ARCH_SET_GS, block);
    if (r == 0) {
      t.app_gs = arg;
    }
    *result = static_cast<std::uint64_t>(r);
    return true;
  }
  // The kernel writes the base to the program's pointer, -EFAULT and all.
  sys::arch_prctl(ARCH_SET_GS, t.app_gs);
  const long r = sys::arch_prctl(ARCH_GET_GS, arg);
  sys::arch_prctl(ARCH_SET_GS, block);
  *result = static_cast<std::uint64_t>(r);
  return true;
}

}  // namespace recorder
