#include "tracer/inprocess/recorder/block_translator.hpp"

#include <algorithm>
#include <cstring>

#include "tracer/inprocess/recorder/branch_sequences.hpp"
#include "tracer/inprocess/recorder/code_check.hpp"
#include "tracer/inprocess/recorder/program_gs.hpp"

namespace recorder {
namespace {

constexpr int kMaxInstructions = 48;
constexpr int kMaxTakenStubs = BlockTranslator::kMaxTakenStubs;
constexpr std::size_t kMaxBlockBytes = kMaxInstructions * 15 + (kMaxTakenStubs + 1) * kMaxExitBytes;

bool fits_rel32(std::int64_t v) {
  return v >= INT32_MIN && v <= INT32_MAX;
}

using Kind = BlockTranslator::Kind;

Kind classify(const ZydisDecodedInstruction& insn, const std::uint8_t* code) {
  const std::uint8_t op = insn.opcode;
  const bool ff = insn.opcode_map == ZYDIS_OPCODE_MAP_DEFAULT && op == 0xff;
  switch (insn.mnemonic) {
    case ZYDIS_MNEMONIC_JMP:
      if (insn.raw.imm[0].is_relative) {
        return Kind::Jmp;
      }
      return ff && insn.raw.modrm.reg == 4 ? Kind::IndirectJmp : Kind::Leave;
    case ZYDIS_MNEMONIC_CALL:
      if (insn.raw.imm[0].is_relative) {
        return Kind::Call;
      }
      return ff && insn.raw.modrm.reg == 2 ? Kind::IndirectCall : Kind::Leave;
    case ZYDIS_MNEMONIC_RET: return op == 0xc3 || op == 0xc2 ? Kind::Ret : Kind::Leave;
    case ZYDIS_MNEMONIC_JRCXZ:
    case ZYDIS_MNEMONIC_JECXZ:
    case ZYDIS_MNEMONIC_LOOP:
    case ZYDIS_MNEMONIC_LOOPE:
    case ZYDIS_MNEMONIC_LOOPNE: return Kind::ShortCond;
    case ZYDIS_MNEMONIC_SYSCALL: return Kind::Syscall;
    case ZYDIS_MNEMONIC_INT3:
    case ZYDIS_MNEMONIC_INT:
    case ZYDIS_MNEMONIC_INT1:
    case ZYDIS_MNEMONIC_INTO:
    case ZYDIS_MNEMONIC_UD0:
    case ZYDIS_MNEMONIC_UD1:
    case ZYDIS_MNEMONIC_UD2:
    case ZYDIS_MNEMONIC_HLT:
    case ZYDIS_MNEMONIC_SYSENTER:
    case ZYDIS_MNEMONIC_IRET:
    case ZYDIS_MNEMONIC_IRETD:
    case ZYDIS_MNEMONIC_IRETQ:
    case ZYDIS_MNEMONIC_XBEGIN: return Kind::Leave;
    default: break;
  }
  if (insn.meta.category == ZYDIS_CATEGORY_COND_BR) {
    return insn.raw.imm[0].is_relative ? Kind::Jcc : Kind::Leave;
  }
  if (insn.meta.category == ZYDIS_CATEGORY_UNCOND_BR || insn.meta.category == ZYDIS_CATEGORY_CALL ||
      insn.meta.category == ZYDIS_CATEGORY_RET || insn.raw.imm[0].is_relative ||
      insn.raw.imm[1].is_relative) {
    return Kind::Leave;  // nothing else transfers control: an unknown one is not guessed at
  }
  (void)code;
  return Kind::Plain;
}

// The copy of a plain instruction at e, rebased when it reads relative to rip; false if out of reach.
bool copy_plain(Emitter& e, const ZydisDecodedInstruction& insn, const std::uint8_t* code, std::uint64_t pc) {
  std::uint8_t* at = e.here();
  if ((insn.attributes & ZYDIS_ATTRIB_IS_RELATIVE) != 0) {
    if (insn.raw.disp.size != 32) {
      return false;
    }
    const std::int64_t rebased = insn.raw.disp.value + static_cast<std::int64_t>(pc - e.address());
    if (!fits_rel32(rebased)) {
      return false;
    }
    e.raw(code, insn.length);
    const auto disp = static_cast<std::int32_t>(rebased);
    __builtin_memcpy(at + insn.raw.disp.offset, &disp, sizeof disp);
    return true;
  }
  e.raw(code, insn.length);
  return true;
}

// A conditional branch (Jcc or ShortCond) whose taken way goes to a stub emitted later: its not-taken
// way falls through; returns the rel32 to point at the stub (patch_rel32).
std::uint8_t* emit_conditional(Emitter& e, const ZydisDecodedInstruction& insn, const std::uint8_t* code, Kind kind) {
  if (kind == Kind::Jcc) {
    e.bytes({0x0f, static_cast<std::uint8_t>(0x80 | (insn.opcode & 0x0f))});
  } else {
    std::uint8_t* copy_at = e.here();
    e.raw(code, insn.length);
    copy_at[insn.raw.imm[0].offset] = 2;  // taken: over the short jmp below
    e.bytes({0xeb, 0x05, 0xe9});          // not taken: over the jmp to the taken path
  }
  std::uint8_t* rel_at = e.here();
  e.u32(0);
  return rel_at;
}

// mov r11, <the operand of call/jmp r/m64>; false if a rip-relative one is out of reach.
bool load_branch_operand(Emitter& e, const ZydisDecodedInstruction& insn, const std::uint8_t* code,
                         std::uint64_t next) {
  for (std::uint8_t i = 0; i < insn.raw.prefix_count; ++i) {
    const std::uint8_t p = insn.raw.prefixes[i].value;
    if (p == 0x64 || p == 0x65 || p == 0x67) {  // (bnd, notrack and the REX are left out)
      e.bytes({p});
    }
  }
  const auto& m = insn.raw.modrm;
  static_assert(kComputedTarget == kR11);
  e.bytes({static_cast<std::uint8_t>(0x4c | (insn.raw.rex.X << 1) | insn.raw.rex.B), 0x8b,
           static_cast<std::uint8_t>((m.mod << 6) | (3 << 3) | m.rm)});  // mov r11, the operand
  const std::uint8_t* rest = code + m.offset + 1;
  const std::size_t rest_len = insn.length - (m.offset + 1u);
  std::uint8_t* rest_at = e.here();
  e.raw(rest, rest_len);
  if (m.mod == 0 && m.rm == 5) {  // [rip+disp32]
    const std::uint64_t target = next + static_cast<std::int64_t>(insn.raw.disp.value);
    const std::int64_t disp = static_cast<std::int64_t>(target - e.address());
    if (!fits_rel32(disp)) {
      return false;
    }
    const auto d = static_cast<std::int32_t>(disp);
    __builtin_memcpy(rest_at, &d, sizeof d);
  }
  return true;
}

// Where an indirect call's or jmp's target is for its computed exit: the register of a `call reg`
// or `jmp reg` (64-bit, neither rcx, r11 nor rsp: the sequences' own, or moved by the call's
// push), used in place; else r11, which load_branch_operand loads.
Reg register_target(const ZydisDecodedInstruction& insn) {
  const auto& m = insn.raw.modrm;
  if (m.mod != 3 || (insn.attributes & ZYDIS_ATTRIB_HAS_OPERANDSIZE) != 0) {
    return kComputedTarget;
  }
  const auto reg = static_cast<Reg>(m.rm | (insn.raw.rex.B << 3));
  return reg == kRcx || reg == kR11 || reg == kRsp ? kComputedTarget : reg;
}

// Whether insn may touch %gs (then its operands are decoded: gs_use).
bool may_use_gs(const ZydisDecodedInstruction& insn) {
  if ((insn.attributes & ZYDIS_ATTRIB_HAS_SEGMENT_GS) != 0) {
    return true;
  }
  switch (insn.mnemonic) {
    case ZYDIS_MNEMONIC_RDGSBASE:
    case ZYDIS_MNEMONIC_WRGSBASE:
    case ZYDIS_MNEMONIC_LGS:
    case ZYDIS_MNEMONIC_PUSH:
    case ZYDIS_MNEMONIC_POP: return true;
    case ZYDIS_MNEMONIC_MOV: return insn.opcode == 0x8c || insn.opcode == 0x8e;  // (to or from a segment register)
    default: return false;
  }
}

}  // namespace

BlockTranslator::ProgramGs BlockTranslator::translate_gs_use(Emitter& e, const ZydisDecodedInstruction& insn,
                                                             const ZydisDecoderContext& context,
                                                             const std::uint8_t* code, std::uint64_t pc) {
  ZydisDecodedOperand operands[ZYDIS_MAX_OPERAND_COUNT];
  if (!ZYAN_SUCCESS(ZydisDecoderDecodeOperands(&decoder_, &context, &insn, operands, insn.operand_count))) {
    return ProgramGs::native;
  }
  switch (gs_use(insn, operands, fsgsbase_)) {
    case GsUse::none: return ProgramGs::untouched;
    case GsUse::native: return ProgramGs::native;
    case GsUse::base_move: emit_gs_base_move(e, insn, operands); return ProgramGs::translated;
    case GsUse::operand: break;
  }
  const GsSwap swap = gs_swap_registers(insn, operands);
  emit_gs_swap_in(e, swap);
  if (!copy_plain(e, insn, code, pc)) {
    return ProgramGs::native;
  }
  emit_gs_swap_out(e, swap);
  return ProgramGs::translated;
}

std::uint64_t BlockTranslator::native_exit(std::uint64_t app) {
  if (!fsgsbase_ || full_ || app == native_landing_) {
    return app;
  }
  std::uint8_t* at = cache_.reserve(app, kMaxExitBytes, 1);
  if (at == nullptr) {
    return app;
  }
  Emitter e(at);
  safe_point(e, app);
  emit_native_exit(e, app, true);
  cache_.commit(e.here());
  return reinterpret_cast<std::uint64_t>(at);
}

BlockTranslator::BlockTranslator(CodeCache& cache, BlockMap& blocks, CodePages& pages, RseqSections& rseq)
    : cache_(cache), blocks_(blocks), pages_(pages), rseq_(rseq) {
  ZydisDecoderInit(&decoder_, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
}

std::uint64_t BlockTranslator::translation_of(std::uint64_t app) {
  if (app == native_landing_) {
    return app;
  }
  const std::uint64_t known = blocks_.find(app);
  if (known != 0) {
    return known;
  }
  const std::uint64_t made = translate_block(app);
  return made != 0 ? made : app;
}

// --- relocation: each instruction decoded where it lies and copied to run from the cache ---

bool BlockTranslator::decode(Decoded& d, std::uint64_t pc, std::uint64_t end, const std::uint8_t* code) {
  const auto readable = static_cast<ZyanUSize>(std::min<std::uint64_t>(15, end - pc));
  if (!ZYAN_SUCCESS(ZydisDecoderDecodeInstruction(&decoder_, &d.context, code, readable, &d.insn))) {
    return false;
  }
  d.code = code;
  d.pc = pc;
  d.next = pc + d.insn.length;
  d.target = d.next + static_cast<std::uint64_t>(d.insn.raw.imm[0].value.s);
  d.kind = classify(d.insn, code);
  return true;
}

BlockTranslator::Relocated BlockTranslator::relocate(Emitter& e, const Decoded& d) {
  if (may_use_gs(d.insn)) {
    const ProgramGs done = translate_gs_use(e, d.insn, d.context, d.code, d.pc);
    if (done == ProgramGs::translated) {
      return Relocated::copied;
    }
    if (done == ProgramGs::native) {
      return Relocated::native;
    }
  }
  if (d.insn.mnemonic == ZYDIS_MNEMONIC_LEA && (d.insn.attributes & ZYDIS_ATTRIB_IS_RELATIVE) != 0) {
    rseq_.learn(d.next + static_cast<std::uint64_t>(d.insn.raw.disp.value), pages_);  // an rseq descriptor?
  }
  if (d.kind != Kind::Plain) {
    return Relocated::branch;
  }
  return copy_plain(e, d.insn, d.code, d.pc) ? Relocated::copied : Relocated::native;
}

// --- instrumentation: each branch recorded when taken, and its ways out of the block ---

void BlockTranslator::emit_taken_way(Emitter& e, std::uint64_t from, std::uint64_t target, std::uint64_t next) {
  safe_point(e, target);
  if (record_ && target != next) {  // (to the next instruction: no branch, as SoftStep sees it)
    emit_record(e, from, target);
  }
  safe_point(e, target);
  emit_direct_exit(e, target, blocks_);
}

bool BlockTranslator::instrument(Emitter& e, const Decoded& d, TakenWays& taken) {
  const std::uint64_t pc = d.pc, next = d.next, target = d.target;
  std::uint8_t* undo = e.here();
  switch (d.kind) {
    case Kind::Plain: return true;  // (relocate's)
    case Kind::Syscall:
      if (d.insn.length != 2) {
        emit_native_exit(e, pc, fsgsbase_);  // (a prefixed one: the gates know the plain two bytes only)
        ++stats_.native_exits;
        return false;
      }
      if (thread_entry_ != 0) {
        emit_sigreturn_return(e, thread_entry_, record_ ? pc : 0, next);
      }
      emit_maps_syscall_check(e, pc);
      safe_point(e, pc);             // on the syscall itself: the program's registers (but its flags)
      e.raw(d.code, d.insn.length);  // runs in place: the kernel sees the same registers
      safe_point(e, next);
      emit_after_syscall(e, next);
      e.mov_imm64(kRcx, next);  // rcx: the program's address after the call, as `syscall` leaves it
      safe_point(e, next);
      emit_direct_exit(e, next, blocks_);
      return false;
    case Kind::Jmp:
    case Kind::Call:
      if (record_ && target != next) {  // (to the next instruction: no branch, as SoftStep sees it)
        emit_record(e, pc, target);
      }
      if (d.kind == Kind::Call) {
        emit_push_return(e, next, false);
      }
      safe_point(e, target);
      emit_direct_exit(e, target, blocks_);
      return false;
    case Kind::Jcc:
    case Kind::ShortCond: {
      std::uint8_t* rel_at = emit_conditional(e, d.insn, d.code, d.kind);
      if (taken.count < kMaxTakenStubs) {
        taken.ways[taken.count++] = {rel_at, pc, target, next};  // not taken: on in this block
        return true;
      }
      safe_point(e, next);
      emit_direct_exit(e, next, blocks_);
      patch_rel32(rel_at, e.address());
      emit_taken_way(e, pc, target, next);
      return false;
    }
    case Kind::IndirectJmp:
    case Kind::IndirectCall:
    case Kind::Ret: {
      const Reg target = d.kind == Kind::Ret ? kComputedTarget : register_target(d.insn);
      emit_save_computed_scratch(e, target);
      if (d.kind == Kind::Ret) {
        const std::uint32_t pop =
            8 + (d.insn.opcode == 0xc2 ? static_cast<std::uint32_t>(d.insn.raw.imm[0].value.u) : 0);
        e.bytes({0x4c, 0x8b, 0x1c, 0x24});  // mov r11, [rsp]
        e.bytes({0x48, 0x8d, 0xa4, 0x24});  // lea rsp, [rsp+pop]
        e.u32(pop);
      } else if (target == kComputedTarget && !load_branch_operand(e, d.insn, d.code, next)) {
        e = Emitter(undo);
        emit_native_exit(e, pc, fsgsbase_);
        ++stats_.native_exits;
        return false;
      }
      if (d.kind == Kind::IndirectCall) {
        emit_push_return(e, next, true);
      }
      emit_computed_exit(e, {.from = record_ ? pc : 0,
                             .next = next,
                             .target = target,
                             .lifeline = d.kind != Kind::IndirectCall});
      return false;
    }
    case Kind::Leave:
      emit_native_exit(e, pc, fsgsbase_);
      ++stats_.native_exits;
      return false;
  }
  return false;
}

std::uint64_t BlockTranslator::translate_block(std::uint64_t start) {
  if (const RseqSection* section = rseq_.section_at(start, pages_)) {
    return translate_rseq_section(*section);
  }
  bool shared = false;
  const std::uint64_t end = pages_.readonly_end(start, &shared);
  if (end == 0) {
    ++stats_.native_exits;  // writable, or no code at all: it runs (or faults) natively
    return 0;
  }
  // Code another view may write (code_check.hpp) is translated from a copy of its bytes, which
  // its check compares with the program's at each entry.
  constexpr std::size_t kMostSourceBytes = kMaxInstructions * 15;
  std::uint8_t snapshot[kMostSourceBytes];
  if (shared) {
    __builtin_memcpy(snapshot, reinterpret_cast<const void*>(start), std::min<std::uint64_t>(kMostSourceBytes, end - start));
  }
  // (Room for a whole block first: a block made with a safe point missing could not be left.)
  constexpr std::size_t kSafePointsPerBlock = 4 * kMaxInstructions + 4 * kMaxTakenStubs;
  const std::size_t room = kMaxBlockBytes + (shared ? code_check_bytes(kMostSourceBytes) : 0);
  std::uint8_t* at = full_ || blocks_.room() == 0 ? nullptr : cache_.reserve(start, room, kSafePointsPerBlock);
  if (at == nullptr) {
    full_ = true;
    ++stats_.refused_full;
    return 0;
  }
  Emitter e(at);
  TakenWays taken;
  std::uint8_t* to_check = nullptr;
  if (shared) {
    safe_point(e, start);
    e.bytes({0xe9});  // jmp the check (emitted after the block, once its length is known)
    to_check = e.here();
    e.u32(0);
  }
  std::uint64_t pc = start;
  std::uint64_t source_end = start;  // past the last instruction translated
  for (int n = 0;; ++n) {
    safe_point(e, pc);
    if (n == kMaxInstructions || pc >= end || (n > 0 && rseq_.starts_at(pc))) {
      emit_direct_exit(e, pc, blocks_);  // a long block goes on in the next: not a branch
      break;
    }
    Decoded d;
    if (!decode(d, pc, end, shared ? snapshot + (pc - start) : reinterpret_cast<const std::uint8_t*>(pc))) {
      emit_native_exit(e, pc, fsgsbase_);
      ++stats_.native_exits;
      break;
    }
    source_end = d.next;
    std::uint8_t* undo = e.here();
    const Relocated relocated = relocate(e, d);
    if (relocated == Relocated::native) {
      e = Emitter(undo);
      safe_point(e, pc);  // (again: those the relocation made past it are forgotten)
      emit_native_exit(e, pc, fsgsbase_);
      ++stats_.native_exits;
      break;
    }
    if (relocated == Relocated::branch && !instrument(e, d, taken)) {
      break;  // the block ends at its branch
    }
    pc = d.next;
  }
  for (int i = 0; i < taken.count; ++i) {
    patch_rel32(taken.ways[i].rel_at, e.address());
    emit_taken_way(e, taken.ways[i].from, taken.ways[i].target, taken.ways[i].next);
  }
  if (to_check != nullptr) {
    patch_rel32(to_check, e.address());
    emit_code_check(e, start, snapshot, source_end - start, reinterpret_cast<std::uint64_t>(to_check + 4));
  }
  cache_.commit(e.here());
  const auto made = reinterpret_cast<std::uint64_t>(at);
  if (!blocks_.insert(start, made)) {
    full_ = true;  // (room() said otherwise: not reached)
    ++stats_.refused_full;
    return 0;
  }
  pages_.note_translated(start);
  ++stats_.blocks;
  return made;
}

std::uint64_t BlockTranslator::translate_rseq_section(const RseqSection& section) {
  const std::int64_t offset = rseq_.config().cs_offset;
  const std::uint64_t descriptor = rseq_.new_descriptor();
  constexpr std::size_t kRseqBytes = 128;  // the entry, the way out's restore, the abort's signature
  constexpr std::size_t kSafePointsPerBlock = 2 * kMaxInstructions + 4 * kMaxTakenStubs;
  std::uint8_t* at = full_ || descriptor == 0 || blocks_.room() == 0
                         ? nullptr
                         : cache_.reserve(section.start, kMaxBlockBytes + (kMaxTakenStubs + 1) * kRseqBytes,
                                          kSafePointsPerBlock);
  if (at == nullptr) {
    full_ = full_ || descriptor != 0;  // (no descriptor left: the sections run natively until a flush)
    ++stats_.refused_full;
    return 0;
  }
  const auto cs_offset = static_cast<std::int32_t>(offset);
  Emitter e(at);
  safe_point(e, section.start);
  emit_rseq_enter(e, cs_offset, descriptor);
  const std::uint64_t copy = e.address();
  struct Out {
    std::uint8_t* rel_at;
    std::uint64_t from, target;
  };
  Out outs[kMaxTakenStubs];
  int out_count = 0;
  bool copied = true;
  std::uint64_t pc = section.start;
  for (int n = 0; pc < section.post_commit && copied; ++n) {
    ZydisDecodedInstruction insn;
    ZydisDecoderContext context;
    const auto* code = reinterpret_cast<const std::uint8_t*>(pc);
    const auto readable = static_cast<ZyanUSize>(std::min<std::uint64_t>(15, section.post_commit - pc));
    if (n == kMaxInstructions || !ZYAN_SUCCESS(ZydisDecoderDecodeInstruction(&decoder_, &context, code, readable, &insn)) ||
        may_use_gs(insn)) {
      copied = false;
      break;
    }
    safe_point(e, pc);
    const std::uint64_t next = pc + insn.length;
    const Kind kind = classify(insn, code);
    if (kind == Kind::Plain) {
      copied = copy_plain(e, insn, code, pc);
    } else if ((kind == Kind::Jcc || kind == Kind::ShortCond) && out_count < kMaxTakenStubs) {
      // The taken way leaves the copy (to the abort handler, or out): its stub follows the copy.
      outs[out_count++] = {emit_conditional(e, insn, code, kind), pc, next + static_cast<std::uint64_t>(insn.raw.imm[0].value.s)};
    } else {
      copied = false;  // (a call, a jump, a system call: not in an rseq section's copy)
    }
    pc = next;
  }
  if (!copied || pc != section.post_commit) {
    cache_.commit(e.here());  // (never run; kept, so that its safe points stay true until a flush)
    ++stats_.native_exits;
    return 0;
  }
  const std::uint64_t copy_end = e.address();
  // The commit's fall-through: the program's word back, on after the section.
  safe_point(e, section.post_commit);
  emit_rseq_leave(e, cs_offset);
  safe_point(e, section.post_commit);
  emit_direct_exit(e, section.post_commit, blocks_);
  for (int i = 0; i < out_count; ++i) {
    patch_rel32(outs[i].rel_at, e.address());
    safe_point(e, outs[i].target);
    emit_rseq_leave(e, cs_offset);
    safe_point(e, outs[i].target);
    if (record_) {
      emit_record(e, outs[i].from, outs[i].target);
    }
    safe_point(e, outs[i].target);
    emit_direct_exit(e, outs[i].target, blocks_);
  }
  // The kernel's abort: its signature before it; the section was cut where the history cannot
  // say (a gap), and the program's handler runs with the word the kernel cleared.
  e.u32(static_cast<std::uint32_t>(rseq_.config().signature));
  const std::uint64_t abort = e.address();
  safe_point(e, section.abort);
  if (record_) {
    emit_record(e, 0, section.abort);  // (from 0: a gap, recorder_ring.h)
  }
  safe_point(e, section.abort);
  emit_direct_exit(e, section.abort, blocks_);
  RseqSections::describe(descriptor, copy, copy_end - copy, abort);
  cache_.commit(e.here());
  const auto made = reinterpret_cast<std::uint64_t>(at);
  if (!blocks_.insert(section.start, made)) {
    full_ = true;
    ++stats_.refused_full;
    return 0;
  }
  pages_.note_translated(section.start);
  ++stats_.blocks;
  return made;
}

}  // namespace recorder
