// Branch decoding with Zydis (operands included) and the emulation of each kind.
#include "arch/x86/branch_emulation.hpp"

#include <Zydis/Zydis.h>

#include "arch/x86/zydis_decoder.hpp"

namespace arch::x86 {
namespace {

constexpr std::uint64_t kCf = 1u << 0;
constexpr std::uint64_t kPf = 1u << 2;
constexpr std::uint64_t kZf = 1u << 6;
constexpr std::uint64_t kSf = 1u << 7;
constexpr std::uint64_t kOf = 1u << 11;

// Zydis's 64-bit registers (rax rcx rdx rbx rsp rbp rsi rdi r8..r15) as GprWord; -1 otherwise.
int gpr_word(ZydisRegister reg) {
  static constexpr int kOrder[] = {kRax, kRcx, kRdx, kRbx, kRsp, kRbp, kRsi, kRdi,
                                   kR8,  kR9,  kR10, kR11, kR12, kR13, kR14, kR15};
  if (reg == ZYDIS_REGISTER_RIP) {
    return kRip;
  }
  const ZydisRegister wide = ZydisRegisterGetLargestEnclosing(ZYDIS_MACHINE_MODE_LONG_64, reg);
  if (wide < ZYDIS_REGISTER_RAX || wide > ZYDIS_REGISTER_R15) {
    return -1;
  }
  return kOrder[wide - ZYDIS_REGISTER_RAX];
}

std::optional<Condition> condition_of(ZydisMnemonic m) {
  switch (m) {
    case ZYDIS_MNEMONIC_JO: return Condition::O;
    case ZYDIS_MNEMONIC_JNO: return Condition::NO;
    case ZYDIS_MNEMONIC_JB: return Condition::B;
    case ZYDIS_MNEMONIC_JNB: return Condition::AE;
    case ZYDIS_MNEMONIC_JZ: return Condition::E;
    case ZYDIS_MNEMONIC_JNZ: return Condition::NE;
    case ZYDIS_MNEMONIC_JBE: return Condition::BE;
    case ZYDIS_MNEMONIC_JNBE: return Condition::A;
    case ZYDIS_MNEMONIC_JS: return Condition::S;
    case ZYDIS_MNEMONIC_JNS: return Condition::NS;
    case ZYDIS_MNEMONIC_JP: return Condition::P;
    case ZYDIS_MNEMONIC_JNP: return Condition::NP;
    case ZYDIS_MNEMONIC_JL: return Condition::L;
    case ZYDIS_MNEMONIC_JNL: return Condition::GE;
    case ZYDIS_MNEMONIC_JLE: return Condition::LE;
    case ZYDIS_MNEMONIC_JNLE: return Condition::G;
    default: return std::nullopt;
  }
}

// The target operand of a jmp or call: relative, register or memory.
bool take_target(const ZydisDecodedOperand& op, Isa isa, BranchInstruction& out) {
  switch (op.type) {
    case ZYDIS_OPERAND_TYPE_IMMEDIATE:
      if (!op.imm.is_relative) {
        return false;
      }
      out.target = TargetKind::Relative;
      out.rel = op.imm.value.s;
      return true;
    case ZYDIS_OPERAND_TYPE_REGISTER:
      out.target = TargetKind::Register;
      out.reg = gpr_word(op.reg.value);
      return out.reg >= 0 && out.reg != kRip;
    case ZYDIS_OPERAND_TYPE_MEMORY: {
      if (op.mem.type != ZYDIS_MEMOP_TYPE_MEM || op.size != out.word_bytes * 8u) {
        return false;
      }
      const bool segmented = op.mem.segment == ZYDIS_REGISTER_FS || op.mem.segment == ZYDIS_REGISTER_GS;
      if (segmented && isa == Isa::I386) {
        return false;  // (call *%gs:0x10, glibc's way to the kernel: the base is a descriptor's)
      }
      MemoryOperand& m = out.mem;
      if (op.mem.base != ZYDIS_REGISTER_NONE && (m.base = gpr_word(op.mem.base)) < 0) {
        return false;
      }
      if (op.mem.index != ZYDIS_REGISTER_NONE && (m.index = gpr_word(op.mem.index)) < 0) {
        return false;
      }
      m.scale = op.mem.scale == 0 ? 1 : op.mem.scale;
      m.disp = op.mem.disp.has_displacement ? op.mem.disp.value : 0;
      if (op.mem.segment == ZYDIS_REGISTER_FS) {
        m.segment_base = kFsBase;
      } else if (op.mem.segment == ZYDIS_REGISTER_GS) {
        m.segment_base = kGsBase;
      }
      out.target = TargetKind::Memory;
      return true;
    }
    default:
      return false;  // far pointers
  }
}

std::uint64_t effective_address(const MemoryOperand& m, std::uint64_t next_pc, const Gprs& gpr) {
  std::uint64_t ea = static_cast<std::uint64_t>(m.disp);
  if (m.base == kRip) {
    ea += next_pc;
  } else if (m.base >= 0) {
    ea += gpr[static_cast<std::size_t>(m.base)];
  }
  if (m.index >= 0) {
    ea += gpr[static_cast<std::size_t>(m.index)] * m.scale;
  }
  if (m.address_bits == 32) {
    ea &= 0xffffffffu;
  }
  if (m.segment_base >= 0) {
    ea += gpr[static_cast<std::size_t>(m.segment_base)];
  }
  return ea;
}

}  // namespace

std::optional<BranchInstruction> decode_branch(std::span<const std::uint8_t> code, Isa isa) {
  const ZydisDecoder* decoder = decoder_for(isa);
  const std::uint8_t word_bits = isa == Isa::I386 ? 32 : 64;
  ZydisDecodedInstruction insn;
  ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
  if (decoder == nullptr || !ZYAN_SUCCESS(ZydisDecoderDecodeFull(decoder, code.data(), insn_window(code), &insn, ops))) {
    return std::nullopt;
  }
  // An operand-size prefix means 16-bit targets on AMD and nothing on Intel: left to the CPU.
  if (insn.meta.branch_type == ZYDIS_BRANCH_TYPE_FAR || insn.operand_width == 16 ||
      (insn.attributes & ZYDIS_ATTRIB_HAS_OPERANDSIZE) != 0) {
    return std::nullopt;
  }
  BranchInstruction out;
  out.length = insn.length;
  out.word_bytes = word_bits / 8;
  const ZydisDecodedOperand& first = ops[0];
  if (auto cond = condition_of(insn.mnemonic)) {
    out.kind = BranchKind::Jcc;
    out.cond = *cond;
    out.rel = first.imm.value.s;
    return first.type == ZYDIS_OPERAND_TYPE_IMMEDIATE && first.imm.is_relative ? std::optional(out) : std::nullopt;
  }
  switch (insn.mnemonic) {
    case ZYDIS_MNEMONIC_JRCXZ:
    case ZYDIS_MNEMONIC_JECXZ:
      out.kind = BranchKind::Jcxz;
      out.counter_bits = insn.mnemonic == ZYDIS_MNEMONIC_JRCXZ ? 64 : 32;
      out.rel = first.imm.value.s;
      return out;
    case ZYDIS_MNEMONIC_LOOP:
    case ZYDIS_MNEMONIC_LOOPE:
    case ZYDIS_MNEMONIC_LOOPNE:
      if (insn.address_width != word_bits) {
        return std::nullopt;  // a counter of another width (an address-size prefix): left to the CPU
      }
      out.counter_bits = word_bits;
      out.kind = insn.mnemonic == ZYDIS_MNEMONIC_LOOP    ? BranchKind::Loop
                 : insn.mnemonic == ZYDIS_MNEMONIC_LOOPE ? BranchKind::Loope
                                                         : BranchKind::Loopne;
      out.rel = first.imm.value.s;
      return out;
    case ZYDIS_MNEMONIC_JMP:
    case ZYDIS_MNEMONIC_CALL:
      out.kind = insn.mnemonic == ZYDIS_MNEMONIC_JMP ? BranchKind::Jmp : BranchKind::Call;
      if (!take_target(first, isa, out)) {
        return std::nullopt;
      }
      if (insn.address_width == 16) {
        return std::nullopt;  // (an address-size prefix in i386 code)
      }
      out.mem.address_bits = insn.address_width == 32 ? 32 : 64;
      return out;
    case ZYDIS_MNEMONIC_RET:
      out.kind = BranchKind::Ret;
      if (insn.operand_count_visible > 0 && first.type == ZYDIS_OPERAND_TYPE_IMMEDIATE) {
        out.pop = static_cast<std::uint16_t>(first.imm.value.u);
      }
      return out;
    default:
      return std::nullopt;
  }
}

bool condition_holds(Condition cond, std::uint64_t rflags) {
  const bool cf = (rflags & kCf) != 0;
  const bool pf = (rflags & kPf) != 0;
  const bool zf = (rflags & kZf) != 0;
  const bool sf = (rflags & kSf) != 0;
  const bool of = (rflags & kOf) != 0;
  switch (cond) {
    case Condition::O: return of;
    case Condition::NO: return !of;
    case Condition::B: return cf;
    case Condition::AE: return !cf;
    case Condition::E: return zf;
    case Condition::NE: return !zf;
    case Condition::BE: return cf || zf;
    case Condition::A: return !cf && !zf;
    case Condition::S: return sf;
    case Condition::NS: return !sf;
    case Condition::P: return pf;
    case Condition::NP: return !pf;
    case Condition::L: return sf != of;
    case Condition::GE: return sf == of;
    case Condition::LE: return zf || sf != of;
    case Condition::G: return !zf && sf == of;
  }
  return false;
}

base::Result<BranchOutcome> emulate_branch(const BranchInstruction& insn, std::uint64_t pc, Gprs& gpr,
                                           BranchMemory& mem) {
  const std::uint64_t mask = insn.word_bytes == 4 ? 0xffffffffu : ~std::uint64_t{0};
  const std::uint64_t counter_mask = insn.counter_bits == 32 ? 0xffffffffu : ~std::uint64_t{0};
  const std::size_t word = insn.word_bytes;
  const std::uint64_t fall = (pc + insn.length) & mask;
  const std::uint64_t relative = (fall + static_cast<std::uint64_t>(insn.rel)) & mask;
  std::uint64_t& rip = gpr[kRip];
  std::uint64_t& rsp = gpr[kRsp];
  std::uint64_t& rcx = gpr[kRcx];
  const std::uint64_t flags = gpr[kEflags];
  auto conditional = [&](bool taken) {
    rip = taken ? relative : fall;
    return BranchOutcome{taken, rip};
  };
  switch (insn.kind) {
    case BranchKind::Jcc:
      return conditional(condition_holds(insn.cond, flags));
    case BranchKind::Jcxz:
      return conditional((rcx & counter_mask) == 0);
    case BranchKind::Loop:
    case BranchKind::Loope:
    case BranchKind::Loopne: {
      rcx = (rcx - 1) & counter_mask;
      bool taken = rcx != 0;
      if (insn.kind == BranchKind::Loope) {
        taken = taken && (flags & kZf) != 0;
      } else if (insn.kind == BranchKind::Loopne) {
        taken = taken && (flags & kZf) == 0;
      }
      return conditional(taken);
    }
    case BranchKind::Jmp:
    case BranchKind::Call: {
      std::uint64_t target = relative;
      if (insn.target == TargetKind::Register) {
        target = gpr[static_cast<std::size_t>(insn.reg)] & mask;
      } else if (insn.target == TargetKind::Memory) {
        auto value = mem.read_word(effective_address(insn.mem, fall, gpr), word);
        if (!value) {
          return std::move(value).error();
        }
        target = *value & mask;
      }
      if (insn.kind == BranchKind::Call) {
        const std::uint64_t pushed_at = (rsp - word) & mask;
        if (auto pushed = mem.write_word(pushed_at, fall, word); !pushed) {
          return std::move(pushed).error();
        }
        rsp = pushed_at;
      }
      rip = target;
      return BranchOutcome{true, target};
    }
    case BranchKind::Ret: {
      auto target = mem.read_word(rsp & mask, word);
      if (!target) {
        return std::move(target).error();
      }
      rsp = (rsp + word + insn.pop) & mask;
      rip = *target & mask;
      return BranchOutcome{true, rip};
    }
  }
  return base::make_error(base::Errc::invalid, "unknown branch kind");
}

}  // namespace arch::x86
