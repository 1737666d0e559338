// What triage found, independent of how it is written (text, JSON, HTML).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "server/triage/process_tree.hpp"
#include "server/triage/signal_facts.hpp"
#include "tracer/event_log.hpp"
#include "tracer/symbols/call_history.hpp"

namespace server::triage {

// How a process ended, as read from its stop (docs/triage.md, "Outcomes").
struct Outcome {
  // Interrupted: triage itself got SIGINT or SIGTERM (a CI runner cancelling the job, Ctrl-C).
  enum class Kind { Exit, Signal, Timeout, Interrupted } kind = Kind::Exit;
  // What a person calls it: exited; crashed (a fault, or the program's own abort or raise of a
  // crash signal); terminated by a signal from another process, the kernel or itself; killed
  // with no siginfo to read (SIGKILL); stopped at --timeout; stopped when triage was interrupted.
  enum class Cause { Exit, Crash, Terminated, Killed, Timeout, Interrupted };
  int signo = 0;             // Signal: the fatal signal; Interrupted: the one triage got
  // Timeout, Interrupted: a process of the tree that could not be stopped (dbt: a descendant),
  // killed instead: what it recorded is all there is.
  bool killed = false;
  int si_code = 0;
  bool has_si_code = false;  // read from the thread's siginfo (not so when killed outright)
  bool has_fault_address = false;
  std::uint64_t fault_address = 0;
  Sender sender = Sender::Unknown;  // Signal with siginfo: who sent it
  tracer::Pid sender_pid = 0;       // Itself, Process: si_pid
  std::string sender_name;          // Process: its /proc/PID/comm at the stop (empty: gone by then)
  int exit_status = 0;              // what triage exits with
  Cause cause() const;
  std::string summary() const;  // "terminated by SIGTERM from timeout (pid 812)"
};

std::string_view cause_name(Outcome::Cause cause);  // "crash", as JSON has it

struct FrameReport {
  std::uint64_t pc = 0;
  tracer::SourceLocation where;
  bool inlined = false;
  bool signal_frame = false;  // the kernel's signal frame: a handler runs above it
  bool tail_call = false;     // jumped to the frame above it (no return address: from call sites)
};

struct ThreadReport {
  tracer::Tid tid = 0;
  std::string name;
  bool got_signal = false;  // the thread the fatal signal came to (crashed, when it is a crash)
  bool ended = false;  // gone before the report (killed from outside): its history only
  std::vector<std::pair<std::string, std::uint64_t>> registers;  // rax ... gs, in GDB's order
  std::vector<FrameReport> backtrace;                            // innermost first
  tracer::CallHistory history;
  std::string history_problem;  // why there is no history (empty: there is)
  std::uint64_t branches_recorded = 0;
  std::uint64_t branches_kept = 0;  // still in the ring; the others were overwritten by newer ones
};

struct TracerReport {
  std::string backend;                // inproc, dbt, soft, step, bts
  std::vector<std::string> not_used;  // "dbt: why", for each faster backend that did not run
  std::uint64_t branches_recorded = 0;
  std::uint64_t branches_kept = 0;
  std::string slowdown_hint;
};

struct SourceExcerpt {
  std::string function;  // of the frame it shows
  std::string file;
  int first_line = 0;
  std::vector<std::string> lines;
  int marked_line = 0;
};

// A crash's signature (signature.hpp).
struct CrashSignature {
  std::string hash;                 // 12 hex digits; empty when there is no signal
  std::vector<std::string> frames;  // "module!function", innermost first, what was hashed
};

// A C++ exception nobody caught (uncaught_exception.hpp).
struct UncaughtException {
  std::string type;                  // "std::invalid_argument"; empty when not found
  tracer::SourceLocation thrown_at;  // the program's own function that threw (its line, when known)
};

struct TriageReport {
  std::string program;
  std::vector<std::string> args;
  tracer::Pid pid = 0;       // the process the report is about
  tracer::Pid root_pid = 0;  // the one triage started (differs for a --follow-fork child)
  std::vector<TreeStep> tree;  // from the started program to this one (process_tree.hpp)
  Outcome outcome;
  CrashSignature signature;
  std::optional<UncaughtException> exception;  // when it ended in std::terminate for one
  TracerReport tracer;
  std::vector<ThreadReport> threads;  // the crashing thread first
  std::vector<tracer::TraceEvent> events;
  double wall_ms = 0;     // the whole run
  double process_ms = 0;  // this process's own life: from its start (or fork) to its death
  std::uint64_t start_ns = 0;  // CLOCK_MONOTONIC at the program's start: t_ms 0 of the events
  // When a history entry was entered, in ms since the start, where the collector keeps time.
  std::optional<double> t_ms(const tracer::HistoryEntry& e) const {
    if (e.t_ns == 0 || start_ns == 0) {
      return std::nullopt;
    }
    return (static_cast<double>(e.t_ns) - static_cast<double>(start_ns)) / 1e6;
  }
  std::vector<SourceExcerpt> sources;  // around each frame of the crashing thread with a line
};

// Lines around `line` of `file` (radius each side); empty when the file cannot be read.
SourceExcerpt source_excerpt(const std::string& file, int line, int radius);

}  // namespace server::triage
