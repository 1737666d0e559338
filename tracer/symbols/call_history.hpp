// A thread's branch history folded into the calls and returns a person reads: each entry is a
// stretch of execution in one function, entered by a call, a return, a jump into another
// function, a signal, or after a gap, with its depth and the branches taken inside it. This
// is what `record function-call-history` shows in GDB, computed without GDB for triage.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "arch/x86/isa.hpp"
#include "tracer/btrace/branch_tracer.hpp"
#include "tracer/symbols/symbolizer.hpp"

namespace tracer {

// What the instruction ending a block did.
enum class Transfer {
  Call,
  Return,
  Jump,     // jmp or jcc: a jump into another function is a tail call
  Syscall,  // a taken transfer at a syscall is rt_sigreturn: back to the interrupted code
  Other,    // not a branch: the kernel interrupted the thread (a signal handler starts)
  Unknown,  // the code cannot be read any more
};

// How the thread came into an entry.
enum class Entered { Start, Call, Return, Jump, Signal, Sigreturn, Gap };

struct HistoryEntry {
  SourceLocation where;    // of the first instruction run there
  Addr address = 0;        // that instruction
  int depth = 0;           // 0 for the outermost function seen in the history
  Entered entered = Entered::Start;
  std::uint64_t branches = 0;  // taken inside, the one that left excluded
  std::uint64_t t_ns = 0;      // when it was entered (CLOCK_MONOTONIC, estimated; 0: unknown)
  // "call" or "return", as triage's JSON names the kind.
  const char* kind() const { return entered == Entered::Return || entered == Entered::Sigreturn ? "return" : "call"; }
};

struct CallHistory {
  std::vector<HistoryEntry> entries;  // oldest first; the last is where the thread is now
  std::uint64_t branches = 0;         // every branch in the history
  std::uint64_t gaps = 0;
  std::uint64_t dropped = 0;          // older entries left out to keep the last ones
};

// The transfer made by the instruction at the start of code of instruction set isa (empty
// code: Unknown).
Transfer classify_transfer(std::span<const std::uint8_t> code, arch::x86::Isa isa);

using ClassifyAt = std::function<Transfer(Addr)>;
using LocateAt = std::function<const SourceLocation&(Addr)>;

// blocks: as BranchTracer::read gives them, newest first. Keeps the last keep_last entries.
// began_ns: when each block began (TimedBlocks), or empty.
CallHistory fold_calls(const std::vector<BtraceBlock>& blocks, const ClassifyAt& classify, const LocateAt& locate,
                       std::size_t keep_last, std::span<const std::uint64_t> began_ns = {});

const char* entered_name(Entered how);

}  // namespace tracer
