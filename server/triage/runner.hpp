// Runs the program and its tree to their end under a history collector: starts it under the
// fastest backend that works (saying why faster ones did not), lets signals it handles through,
// and stops each process at the one that would kill it. One loop waits for all of it.
#pragma once

#include <csignal>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/result.hpp"
#include "server/parts.hpp"
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
// parts: where the dbt and in-process recorders are (the dbt folder empty: not built).
base::Result<Recorded> start_recorded(const Options& options, const Parts& parts, tracer::EventLog& log);

struct Ending {
  Outcome outcome;
  tracer::StopEvent stop;  // Signal/Timeout: where the process stands now, stopped
  // A process the collector followed by itself (dbt: any of the tree) is stopped in a target
  // of its own, and named by the command it was started with.
  std::unique_ptr<tracer::Target> own_target;
  std::vector<std::string> command;
  std::string maps;  // one killed outright: its /proc/PID/maps as its code last changed
  std::uint64_t started_ns = 0;  // CLOCK_MONOTONIC at its start (its fork); 0: the run's start
  std::uint64_t stopped_ns = 0;  // CLOCK_MONOTONIC when that stop came: no branch is later
  bool reported = false;  // handed to on_death already
  // The run was cut short (--timeout, or triage itself got SIGINT or SIGTERM): what is left of
  // the tree is killed, each process reported with this outcome (killed: what it recorded).
  std::optional<Outcome> cut_short;
};

// A process of the tree died of a signal (or was killed outright): it is stopped there, where
// it can be, for the report; then it dies of it and the run goes on.
using OnDeath = std::function<void(const Ending&)>;

// Runs the tree to its end: until the program triage started has ended and no process of its
// tree is left, whoever reaps them (triage is the tree's reaper: an orphan comes to it). Each
// process that dies of a signal goes to on_death. Returns the started program's end; without
// on_death (--serve), the first death anywhere, stopped; at --timeout with the program still
// running, the program stopped where it was (not handed to on_death), and the same when triage
// gets SIGINT or SIGTERM (outcome interrupted). `stop_requested` is set (to the signal) by
// triage's handler.
Ending run_to_end(Recorded& run, const Options& options, tracer::EventLog& log,
                  const volatile std::sig_atomic_t& stop_requested, const OnDeath& on_death = {});

// What is left of the tree when the run stopped early (--timeout, SIGINT, GDB gone): killed.
// When the run was cut short, each process the collector followed by itself (dbt: every
// descendant) goes to on_death as it is reaped, with what it recorded.
void kill_tree(Recorded& run, const Ending& ending, tracer::EventLog& log, const OnDeath& on_death = {});

// The target the ending process stands in: its own, or the run's.
inline tracer::Target& target_of(Recorded& run, const Ending& ending) {
  return ending.own_target ? *ending.own_target : *run.target;
}

}  // namespace server::triage
