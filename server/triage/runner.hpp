// Runs the program to its end under a history collector: starts it under the fastest backend
// that works (saying why faster ones did not), lets signals it handles through, and stops at
// the one that would kill it, at exit, or at --timeout.
#pragma once

#include <csignal>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/result.hpp"
#include "server/triage/options.hpp"
#include "server/triage/report.hpp"
#include "tracer/backend.hpp"
#include "tracer/target.hpp"

namespace server::triage {

struct Recorded {
  std::unique_ptr<tracer::Target> target;
  tracer::Pid pid = 0;
  tracer::Backend backend = tracer::Backend::Auto;  // what recorded
  std::vector<std::string> not_used;  // "dbt: why" for each faster backend skipped
  std::string maps;                   // pid's /proc/PID/maps as its libraries last changed
};

// Starts options.program stopped at its first instruction with every thread recorded.
// dbt_lib: the recorder's VALGRIND_LIB (empty: not built).
base::Result<Recorded> start_recorded(const Options& options, const std::string& dbt_lib, tracer::EventLog& log);

struct Ending {
  Outcome outcome;
  tracer::StopEvent stop;  // Signal/Timeout: where the process stands now, stopped
  // A process the collector followed by itself (dbt: any of the tree) is stopped in a target
  // of its own, and named by the command it was started with.
  std::unique_ptr<tracer::Target> own_target;
  std::vector<std::string> command;
  std::string maps;  // one killed outright: its /proc/PID/maps as its code last changed
  std::uint64_t stopped_ns = 0;  // CLOCK_MONOTONIC when that stop came: no branch is later
  bool interrupted = false;  // triage itself got SIGINT or SIGTERM (stop_signal)
  int stop_signal = 0;
};

// A followed descendant (--follow-fork) died of a signal: it is stopped there for the report,
// then gets its signal and the run goes on.
using DescendantCrash = std::function<void(const Ending&)>;

// Runs to the end of the program triage started (or its crash, or the first crash anywhere
// when on_descendant_crash is empty). `stop_requested` is set (to the signal) by triage's
// SIGINT/SIGTERM handler.
Ending run_to_end(Recorded& run, const Options& options, tracer::EventLog& log,
                  const volatile std::sig_atomic_t& stop_requested, const DescendantCrash& on_descendant_crash = {});

// After the report: lets the fatal signal end the program as it would have (a core dump where
// the system makes one), or kills it (timeout, or when that does not end it).
void finish(Recorded& run, const Ending& ending);

// The target the ending process stands in: its own, or the run's.
inline tracer::Target& target_of(Recorded& run, const Ending& ending) {
  return ending.own_target ? *ending.own_target : *run.target;
}

}  // namespace server::triage
