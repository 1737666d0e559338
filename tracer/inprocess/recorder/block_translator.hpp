// Translating the program's code one basic block at a time, lazily, into the code cache: every
// instruction that is not a branch is copied (an operand relative to rip rebased), and the
// block's branch becomes a record of (from, to) when taken and a jump to the translated target.
// A call pushes the program's own return address. What it cannot translate (a trap, a far
// transfer, xbegin, a rip-relative operand out of reach) leaves the cache: the program runs on
// natively from that instruction and recording ends there (a gap). So does code outside an
// executable, non-writable mapping (code_pages.hpp), and a block ends where its mapping does.
// A block ends after a system call: one that may change the mappings goes through the maps gate.
// A block also ends where an rseq critical section begins: the section is translated as a copy
// the kernel can abort (rseq_sections.hpp).
//
// It also notes the safe points of each translation: cache addresses where the thread's
// registers are the program's own at a known program address (each copied instruction's start,
// each exit's start, a direct exit after its record), so that a thread stopped there can be
// moved back to the program's code.
//
// When the cache or a table is full it translates nothing more (full()) until its owner has
// forgotten every translation (recorder.cpp: at once for a process's only thread, else at the
// server's next flush), so that recording goes on past any number of blocks.
#pragma once

#include <Zydis/Zydis.h>

#include <cstdint>

#include "tracer/inprocess/recorder/block_map.hpp"
#include "tracer/inprocess/recorder/code_cache.hpp"
#include "tracer/inprocess/recorder/code_pages.hpp"
#include "tracer/inprocess/recorder/emitter.hpp"
#include "tracer/inprocess/recorder/rseq_sections.hpp"

namespace recorder {

struct TranslatorStats {
  std::uint64_t blocks = 0;
  std::uint64_t native_exits = 0;  // blocks that end by leaving the cache
  std::uint64_t refused_full = 0;  // translations refused because the cache or a table was full
};

class BlockTranslator {
 public:
  // A block goes on past this many conditional branches (their not-taken way falls through to the
  // next instruction's copy; their taken ways are stubs after the block), then ends at the next.
  static constexpr int kMaxTakenStubs = 8;
  // What an instruction does to control flow (block_translator.cpp: classify).
  enum class Kind { Plain, Syscall, Jmp, Jcc, ShortCond, Call, IndirectJmp, IndirectCall, Ret, Leave };

  BlockTranslator(CodeCache& cache, BlockMap& blocks, CodePages& pages, RseqSections& rseq);
  // The cache address that runs `app`: translated now if need be; `app` itself when it is a
  // native landing (leave_at) or nothing could be translated.
  std::uint64_t translation_of(std::uint64_t app);
  // Control reaching `app` leaves the cache (the recorder's own way home).
  void leave_at(std::uint64_t app) { native_landing_ = app; }
  // Where a signal handler's rt_sigreturn goes back into the cache (0: it returns natively).
  void set_thread_entry(std::uint64_t entry) { thread_entry_ = entry; }
  // The kernel lets the program's code run wrgsbase (AT_HWCAP2's FSGSBASE): the program's own
  // %gs operands are translated, and native code runs with its own base (program_gs.hpp).
  void set_fsgsbase(bool on) { fsgsbase_ = on; }
  // Where a thread bound for native code at `app` (which translation_of left untranslated) goes:
  // a way out made for it in the cache, which gives the program its %gs base first; `app` itself
  // when none is needed or could be made.
  std::uint64_t native_exit(std::uint64_t app);
  // Without ring stores: what the translation alone costs.
  void set_recording(bool on) { record_ = on; }
  const TranslatorStats& stats() const { return stats_; }
  // The cache or one of its tables is full: translation_of makes nothing more until the
  // translations are forgotten (then emptied() says so).
  bool full() const { return full_; }
  void emptied() { full_ = false; }

 private:
  // A block: each instruction relocated (decode, relocate), each branch instrumented (instrument).
  std::uint64_t translate_block(std::uint64_t start);

  // One instruction of a block, decoded where it lies (or from the block's snapshot).
  struct Decoded {
    ZydisDecodedInstruction insn;
    ZydisDecoderContext context;
    const std::uint8_t* code = nullptr;  // its bytes
    std::uint64_t pc = 0, next = 0;
    std::uint64_t target = 0;  // a direct branch's
    Kind kind = Kind::Plain;
  };
  // The taken ways of a block's conditional branches, emitted as stubs after it.
  struct TakenWays {
    struct Way {
      std::uint8_t* rel_at;  // the conditional jump's rel32, to point at the stub
      std::uint64_t from, target, next;
    };
    Way ways[kMaxTakenStubs];
    int count = 0;
  };
  // --- relocation (Stalker's relocator): the instruction decoded, and copied to run from the
  // cache (a rip-relative operand rebased, a %gs operand of the program's translated) ---
  bool decode(Decoded& d, std::uint64_t pc, std::uint64_t end, const std::uint8_t* code);
  enum class Relocated { copied, branch, native };  // branch: instrument() emits it
  Relocated relocate(Emitter& e, const Decoded& d);
  // --- instrumentation (Stalker's transformer): a branch recorded when taken, and its ways on
  // (direct exits, the lookup, the maps gate for a system call). True: the block goes on (a
  // conditional branch's not-taken way). ---
  bool instrument(Emitter& e, const Decoded& d, TakenWays& taken);
  void emit_taken_way(Emitter& e, std::uint64_t from, std::uint64_t target, std::uint64_t next);
  // An rseq critical section as a copy with a descriptor of the recorder's (rseq_sections.hpp);
  // 0 if it holds what a copy cannot (then it runs natively).
  std::uint64_t translate_rseq_section(const RseqSection& section);
  enum class ProgramGs { untouched, translated, native };
  // An instruction that may touch %gs (program_gs.hpp): its translation emitted, or none needed,
  // or it runs natively.
  ProgramGs translate_gs_use(Emitter& e, const ZydisDecodedInstruction& insn, const ZydisDecoderContext& context,
                             const std::uint8_t* code, std::uint64_t pc);
  void safe_point(const Emitter& e, std::uint64_t app) { full_ = !cache_.add_safe_point(e.address(), app) || full_; }
  CodeCache& cache_;
  BlockMap& blocks_;
  CodePages& pages_;
  RseqSections& rseq_;
  ZydisDecoder decoder_{};
  std::uint64_t native_landing_ = 0;
  std::uint64_t thread_entry_ = 0;
  bool record_ = true;
  bool full_ = false;
  bool fsgsbase_ = false;
  TranslatorStats stats_;
};

}  // namespace recorder
