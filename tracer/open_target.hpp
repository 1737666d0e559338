// The Target a backend needs, opened in one place for the server and for triage, with the
// fall-back chain and its reasons written once, from the rows of tracer/backend.hpp: a GDB
// session asking for dbt gets its session_fallback (soft) when the recorder cannot run the
// program; triage's auto tries kAutoUnattended in order (inproc, dbt, soft, then step).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/result.hpp"
#include "tracer/backend.hpp"
#include "tracer/btrace/scope.hpp"
#include "tracer/target.hpp"

namespace tracer {

struct TargetRequest {
  Backend backend = Backend::Auto;
  // Triage: nobody is there to ask, so auto takes the recorder first, every thread records
  // from the first instruction, and what a process recorded outlives it.
  bool unattended = false;
  bool follow_forks = false;          // record fork children too (soft, step; dbt when unattended: the whole tree)
  std::optional<LaunchSpec> launch;   // start this program now (dbt must: it starts under the recorder)
  std::uint64_t ring_bytes = 0;       // each thread's ring under dbt, and when unattended
  BtraceScope scope;                  // what SoftEmulate records
  std::string dbt_lib;                // the recorder's VALGRIND_LIB (empty: not built)
  std::string recorder_lib;           // libhindsight-recorder.so (--btrace=inproc)
  std::string keep_rings_in;          // dbt: the rings stay here, every process's (DbtOptions)
  EventLog* log = nullptr;            // threads, forks and execs as they happen
};

// A backend the chain passed over, and why.
struct NotUsed {
  Backend backend;
  std::string why;
};

struct OpenedTarget {
  std::unique_ptr<Target> target;
  Backend backend = Backend::Auto;  // what records (auto: BTS or soft, chosen per process)
  std::optional<Pid> pid;           // the program, when the request launched one
  std::vector<NotUsed> not_used;    // each faster backend passed over, in order
};

// The backends a request tries, fastest first, and those it passes over without trying.
// An error: the request cannot be met (dbt with --follow-fork, dbt with no program).
struct BackendChain {
  std::vector<Backend> tries;
  std::vector<NotUsed> passed_over;
};
Result<BackendChain> backend_chain(const TargetRequest& request);

// Whether backend brings a Target of its own (dbt: ValgrindTarget) instead of recording in
// LinuxTarget with a collector (tracer/btrace/collector_factories.hpp).
bool has_own_target(Backend backend);

// Opens (and launches, when asked) with the first backend of the chain that works. A program
// that cannot start at all is an error at once: no other backend would do better.
Result<OpenedTarget> open_target(const TargetRequest& request);

}  // namespace tracer
