// The history collectors a user can ask for (--btrace, triage's --btrace): one enum, one table of
// rows (name, cost, needs, rules), read by the server's and triage's command lines, `--version`,
// `monitor btrace`, the progress lines and the reports.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tracer {

enum class Backend : std::uint8_t {
  Auto,  // the fastest that works here (open_target.hpp says in which order)
  Bts,   // Intel BTS through perf_event
  Dbt,   // the program runs under the dbt recorder (a Valgrind tool)
  Soft,  // SoftEmulate: int3 at branches
  Step,  // SoftStep: single-stepping
};

// What a backend needs of the machine; collectors_here.cpp probes each need once.
enum class Needs : std::uint8_t {
  Nothing,   // auto: whatever the others need
  PerfBts,   // perf_event_open gives branch samples (Intel BTS) for the thread
  Valgrind,  // the recorder is built and Valgrind runs here
  Ptrace,    // ptrace is allowed (Yama)
};

// One backend: its name, what it is, what it costs and the rules the command lines and the
// reports follow. A new backend is a new row (and its collector or target, open_target.cpp).
struct BackendRow {
  Backend backend;
  std::string_view name;
  std::string_view what;       // for --help and the man pages
  std::string_view cost;       // what it costs the program, as triage's report says it
  Needs needs;
  bool scoped;                 // records only what --btrace-scope names (else every branch)
  bool launch_only;            // records only a program it starts: no --attach, --multi or --wrapper
  bool stop_per_branch;        // a ptrace stop per branch or instruction: a long run says how it goes
};
inline constexpr BackendRow kBackends[] = {
    {Backend::Auto, "auto", "the fastest that works here", "the fastest collector this machine has", Needs::Nothing,
     true, false, false},
    {Backend::Bts, "bts", "Intel BTS through perf_event: the CPU records every branch (Intel hardware, no VM)",
     "bts: the hardware records branches; the program runs near native speed", Needs::PerfBts, false, false, false},
    {Backend::Dbt, "dbt", "PROG runs under the dbt recorder, a Valgrind tool: every branch, about 5x slower than native",
     "dbt: the program ran under a Valgrind tool, about 5x slower than native on branchy code", Needs::Valgrind,
     false, true, false},
    {Backend::Soft, "soft", "software: an int3 at each branch, the branch emulated",
     "soft: one ptrace stop per taken branch (~30k branches/s); code without branches runs native", Needs::Ptrace,
     true, false, true},
    {Backend::Step, "step", "software: single-stepping, the slow reference",
     "step: one ptrace stop per instruction (~25k instructions/s)", Needs::Ptrace, false, false, true},
};

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
