// The low-rate channel beside the branch rings: what happened to the processes, in order, with
// nothing overwritten (threads born and exited, signals, libraries, forks, execs). Triage
// shows it; a Target writes into it when given one (Target::set_event_log).
#pragma once

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include "tracer/btrace/time_marks.hpp"
#include "tracer/types.hpp"

namespace tracer {

struct TraceEvent {
  double t_ms = 0;    // since the log began (the program's start)
  std::string kind;   // thread_start, thread_exit, signal, library_load, library_unload, fork, exec
  Pid pid = 0;
  Tid tid = 0;
  std::string detail{};  // a library or program path, a signal's name
  int number = 0;        // a signal number, a child pid, an exit status
};

class EventLog {
 public:
  using Clock = std::chrono::steady_clock;  // CLOCK_MONOTONIC, as the dbt recorder stamps

  EventLog() : start_(Clock::now()) {}
  void add(std::string kind, Pid pid, Tid tid, std::string detail = {}, int number = 0) {
    add_at(Clock::now(), std::move(kind), pid, tid, std::move(detail), number);
  }
  void add_at(Clock::time_point when, std::string kind, Pid pid, Tid tid, std::string detail = {}, int number = 0) {
    const double ms = std::chrono::duration<double, std::milli>(when - start_).count();
    events_.push_back(TraceEvent{ms, std::move(kind), pid, tid, std::move(detail), number});
  }
  // Every event, oldest first (events stamped by the recorder arrive late: sorted here).
  std::vector<TraceEvent> events() const {
    std::vector<TraceEvent> out = events_;
    std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.t_ms < b.t_ms; });
    return out;
  }
  std::uint64_t start_ns() const { return monotonic_ns(start_); }  // t_ms 0, CLOCK_MONOTONIC
  double elapsed_ms() const { return std::chrono::duration<double, std::milli>(Clock::now() - start_).count(); }

 private:
  Clock::time_point start_;
  std::vector<TraceEvent> events_;
};

}  // namespace tracer
