// The history collectors a user can ask for (--btrace, triage's --btrace): one enum, one table of
// rows (name, cost, needs, rules) and auto's orders, read by the server's and triage's command
// lines, `--version`, `monitor btrace`, the progress lines, the reports and the fall-back chains.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tracer {

enum class Backend : std::uint8_t {
  Auto,  // the fastest that works here (kAutoInSession, kAutoUnattended say in which order)
  Bts,   // Intel BTS through perf_event
  Dbt,   // the program runs under the dbt recorder (a Valgrind tool)
  Soft,  // SoftEmulate: int3 at branches
  Step,  // SoftStep: single-stepping
  Inproc,  // the in-process recorder: a code cache inside the program records each branch
};

// What a backend needs of the machine; collectors_here.cpp probes each need once.
enum class Needs : std::uint8_t {
  Nothing,   // auto: whatever the others need
  PerfBts,   // perf_event_open gives branch samples (Intel BTS) for the thread
  Valgrind,  // the recorder is built and Valgrind runs here
  Ptrace,    // ptrace is allowed (Yama)
  Recorder,  // ptrace, and libhindsight-recorder.so is where this hindsight looks for it
};

// One backend: its name, what it is, what it costs and the rules the command lines, the reports and
// the fall-back chains follow. A new backend is a new row, its place in the auto orders below, and
// its own files: a collector (tracer/btrace/collector_factories.cpp maps the row to its factory)
// or a Target of its own (open_target.cpp's kOwnTargets).
struct BackendRow {
  Backend backend;
  std::string_view name;
  std::string_view what;       // for --help and the man pages
  std::string_view cost;       // what it costs the program, as triage's report says it
  std::string_view called;     // what advice calls it ("the in-process recorder")
  Needs needs;
  bool scoped = false;           // records only what --btrace-scope names (else every branch)
  bool launch_only = false;      // records only a program it starts: no --attach, --multi or --wrapper
  bool stop_per_branch = false;  // a ptrace stop per branch or instruction: a long run says how it goes
  bool under_another = false;    // the program runs under another program, which /proc names instead
  bool ring_files = false;       // its rings are files (dbt_ring.h) that triage can keep (--keep-rings)
  // Why a GDB session cannot follow forks with it (empty: it can).
  std::string_view no_fork_following = {};
  // What a GDB session records with when this backend cannot run the program (none: the error stands).
  std::optional<Backend> session_fallback = std::nullopt;
};
inline constexpr BackendRow kBackends[] = {
    {.backend = Backend::Auto,
     .name = "auto",
     .what = "the fastest that works here",
     .cost = "the fastest collector this machine has",
     .called = "the fastest collector here",
     .needs = Needs::Nothing,
     .scoped = true},
    {.backend = Backend::Bts,
     .name = "bts",
     .what = "Intel BTS through perf_event: the CPU records every branch (Intel hardware, no VM)",
     .cost = "bts: the hardware records branches; the program runs near native speed",
     .called = "Intel BTS",
     .needs = Needs::PerfBts},
    {.backend = Backend::Dbt,
     .name = "dbt",
     .what = "PROG runs under the dbt recorder, a Valgrind tool: every branch, about 5x slower than native",
     .cost = "dbt: the program ran under a Valgrind tool, about 5x slower than native on branchy code",
     .called = "the dbt recorder",
     .needs = Needs::Valgrind,
     .launch_only = true,
     .under_another = true,
     .ring_files = true,
     .no_fork_following = "under dbt, Valgrind's gdbserver serves one process",
     .session_fallback = Backend::Soft},
    {.backend = Backend::Soft,
     .name = "soft",
     .what = "software: an int3 at each branch, the branch emulated",
     .cost = "soft: one ptrace stop per taken branch (~30k branches/s); code without branches runs native",
     .called = "the software tracer",
     .needs = Needs::Ptrace,
     .scoped = true,
     .stop_per_branch = true},
    {.backend = Backend::Step,
     .name = "step",
     .what = "software: single-stepping, the slow reference",
     .cost = "step: one ptrace stop per instruction (~25k instructions/s)",
     .called = "single-stepping",
     .needs = Needs::Ptrace,
     .stop_per_branch = true},
    {.backend = Backend::Inproc,
     .name = "inproc",
     .what = "in-process: the server brings a recorder into the program, whose code runs in a cache that records "
             "each taken branch (about 2x slower than native; at attach too)",
     .cost = "inproc: the program ran in the in-process recorder's code cache, about 2x slower than native",
     .called = "the in-process recorder",
     .needs = Needs::Recorder,
     .no_fork_following = "the in-process recorder does not follow forks yet"},
};

// What --btrace=auto tries, fastest first, each a row above; the first that works records.
// A GDB session chooses for each process as its first thread starts recording
// (LinuxTarget::make_collector), so only backends with a collector are here; a --btrace-scope
// passes over a row that is not scoped, and inproc passes where the recorder cannot come in (a
// 32-bit program, seccomp's strict mode, a tight RLIMIT_AS: ProcessRecorder::unfit).
inline constexpr Backend kAutoInSession[] = {Backend::Bts, Backend::Inproc, Backend::Soft};
// Triage (unattended) chooses as the program starts (open_target): a launch_only row only when it
// starts one. bts only when asked for (docs/triage.md). inproc first: no Valgrind start-up per
// process (bench/triage_bench.sh); dbt where it cannot come into the started program (seccomp's
// strict mode, a tight RLIMIT_AS).
inline constexpr Backend kAutoUnattended[] = {Backend::Inproc, Backend::Dbt, Backend::Soft, Backend::Step};

// The row of a backend (every enumerator has one).
inline const BackendRow& backend_row(Backend backend) {
  for (const auto& row : kBackends) {
    if (row.backend == backend) {
      return row;
    }
  }
  return kBackends[0];
}

inline std::string_view backend_name(Backend backend) { return backend_row(backend).name; }

// Where hardware cannot record, or a collector cannot serve this way: the first of auto's
// session choices with no hardware, which records at launch and at attach alike.
inline Backend software_choice() {
  for (const Backend backend : kAutoInSession) {
    const BackendRow& row = backend_row(backend);
    if (row.needs != Needs::PerfBts && !row.launch_only) {
      return backend;
    }
  }
  return Backend::Soft;
}
// "use the in-process recorder (--btrace=inproc)": the advice that names software_choice().
inline std::string software_advice() {
  const BackendRow& row = backend_row(software_choice());
  return "use " + std::string(row.called) + " (--btrace=" + std::string(row.name) + ")";
}

inline std::optional<Backend> backend_from_name(std::string_view name) {
  for (const auto& row : kBackends) {
    if (row.name == name) {
      return row.backend;
    }
  }
  return std::nullopt;
}

// name -> backend, for a command-line parser's checked transform.
inline std::map<std::string, Backend> backend_names() {
  std::map<std::string, Backend> out;
  for (const auto& row : kBackends) {
    out.emplace(row.name, row.backend);
  }
  return out;
}

// "{auto,bts,dbt,soft,step}": the choices as --help shows them (a parser would print the enum's
// values, which are bytes).
inline std::string backend_choices() {
  std::string out = "{";
  for (const auto& row : kBackends) {
    out += (out.size() > 1 ? "," : "") + std::string(row.name);
  }
  return out + "}";
}

}  // namespace tracer
