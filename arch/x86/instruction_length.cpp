// Instruction decoding with Zydis, reduced to length and kind.
#include "arch/x86/instruction_length.hpp"

#include <Zydis/Zydis.h>

#include "arch/x86/zydis_decoder.hpp"

namespace arch::x86 {
namespace {

InsnKind kind_of(const ZydisDecodedInstruction& insn) {
  switch (insn.mnemonic) {
    case ZYDIS_MNEMONIC_SYSCALL:
    case ZYDIS_MNEMONIC_SYSENTER:
      return InsnKind::Syscall;
    case ZYDIS_MNEMONIC_INT:
      // int 0x80 is CD 80: the immediate is the second byte.
      return insn.raw.imm[0].value.u == 0x80 ? InsnKind::Syscall : InsnKind::Trap;
    case ZYDIS_MNEMONIC_INT3:
    case ZYDIS_MNEMONIC_INT1:
    case ZYDIS_MNEMONIC_INTO:
      return InsnKind::Trap;
    default:
      break;
  }
  switch (insn.meta.category) {
    case ZYDIS_CATEGORY_COND_BR:
    case ZYDIS_CATEGORY_UNCOND_BR:
    case ZYDIS_CATEGORY_CALL:
    case ZYDIS_CATEGORY_RET:
    case ZYDIS_CATEGORY_SYSRET:
      return InsnKind::Branch;
    case ZYDIS_CATEGORY_STRINGOP:
      if ((insn.attributes & (ZYDIS_ATTRIB_HAS_REP | ZYDIS_ATTRIB_HAS_REPE | ZYDIS_ATTRIB_HAS_REPNE)) != 0) {
        return InsnKind::RepString;
      }
      return InsnKind::Plain;
    default:
      break;
  }
  if (insn.mnemonic == ZYDIS_MNEMONIC_IRET || insn.mnemonic == ZYDIS_MNEMONIC_IRETD ||
      insn.mnemonic == ZYDIS_MNEMONIC_IRETQ) {
    return InsnKind::Branch;
  }
  return InsnKind::Plain;
}

StackEffect stack_effect_of(const ZydisDecodedInstruction& insn) {
  if (insn.meta.category == ZYDIS_CATEGORY_CALL) {
    return StackEffect::Call;
  }
  if (insn.meta.category == ZYDIS_CATEGORY_RET || insn.mnemonic == ZYDIS_MNEMONIC_IRET ||
      insn.mnemonic == ZYDIS_MNEMONIC_IRETD || insn.mnemonic == ZYDIS_MNEMONIC_IRETQ) {
    return StackEffect::Return;
  }
  return StackEffect::None;
}

}  // namespace

std::optional<InstructionInfo> decode_instruction(std::span<const std::uint8_t> code, Isa isa) {
  const ZydisDecoder* decoder = decoder_for(isa);
  ZydisDecodedInstruction insn;
  if (decoder == nullptr ||
      !ZYAN_SUCCESS(ZydisDecoderDecodeInstruction(decoder, nullptr, code.data(), insn_window(code), &insn))) {
    return std::nullopt;
  }
  return InstructionInfo{insn.length, kind_of(insn), stack_effect_of(insn)};
}

bool step_took_branch(const InstructionInfo& insn, std::uint64_t from, std::uint64_t to) {
  if (to == from + insn.length) {
    return false;
  }
  if (to == from) {
    return insn.kind == InsnKind::Branch;  // jmp . is a branch; anything else did not run
  }
  return true;
}

}  // namespace arch::x86
