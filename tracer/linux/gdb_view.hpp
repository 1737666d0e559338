// One thread as GDB sees it: whether GDB let it run and has not heard its stop, what its
// resume asked (continue, step, range step, with which signal), the signal of the stop GDB
// heard, signals GDB gave it that were not delivered yet, and what a stop GDB asked for is to
// say. The only writer of these facts: the core tells it what happened (named events) and
// reads them back; pure, tested alone (test_gdb_view.cpp). Where the thread stands with the
// kernel is ThreadRun's (thread_run.hpp).
#pragma once

#include <deque>
#include <optional>
#include <utility>

#include "tracer/types.hpp"

namespace tracer {

class GdbView {
 public:
  // GDB let it run and has not heard of its stop (all-stop: part of the current resume;
  // non-stop: running as far as GDB knows).
  bool resumed() const { return resumed_; }
  const ThreadAction& action() const { return action_; }
  // GDB asked it to step (or range-step).
  bool stepping() const { return action_.kind == ResumeKind::Step || action_.kind == ResumeKind::RangeStep; }
  // What GDB asked to hear of it besides its stops (QThreadOptions).
  const ThreadOptions& options() const { return options_; }
  // The signal of its stop GDB heard of, until it runs again (a detach delivers it when GDB
  // lets the program have it).
  int reported_signal() const { return reported_signal_; }

  // --- what GDB did ---------------------------------------------------------------------
  // A resume packet named it.
  void resumed_by(const ThreadAction& a) {
    resumed_ = true;
    action_ = a;
  }
  // Running as far as GDB knows without a resume of its own: attached in non-stop, a new
  // thread of a running process, a fork child whose parent ran.
  void runs_on(const ThreadAction& a) {
    resumed_ = true;
    action_ = a;
  }
  // An exec made it the process's only thread: GDB's view of the thread that called exec.
  void took_over_from(const GdbView& execer, Tid self) {
    *this = execer;
    if (action_.tid != kAllThreads) {
      action_.tid = self;
    }
  }
  // QThreadOptions named it.
  void set_options(const ThreadOptions& o) { options_ = o; }
  // A vCont;t or ^C: its stop is to say this signal (non-stop: 0; ^C: SIGINT).
  void stop_to_say(int sig) { stop_says_ = sig; }
  // That stop came, or another report made it moot: the signal it says, once.
  std::optional<int> take_stop_saying() {
    if (stop_says_ < 0) {
      return std::nullopt;
    }
    return std::exchange(stop_says_, -1);
  }

  // --- what the core did ----------------------------------------------------------------
  // The signal GDB's resume gave it, for delivery now (once).
  int take_resume_signal() { return std::exchange(action_.signal, 0); }
  // A signal GDB passes (QPassSignals) that cannot be delivered now (another thread steps
  // over an int3): delivered when this one runs.
  void deliver_when_run(int sig) { action_.signal = sig; }
  // It runs, delivering sig: the signal that goes in its place if GDB gave it some that were
  // never delivered (oldest first; sig then waits its turn).
  int runs_with(int sig) {
    reported_signal_ = 0;  // GDB's resume said what becomes of it
    if (held_.empty()) {
      return sig;
    }
    if (sig != 0) {
      held_.push_back(sig);
    }
    const int first = held_.front();
    held_.pop_front();
    return first;
  }

  // A signal GDB gave it already comes back (the kernel queued it again): delivered when it
  // next runs, first, GDB not told twice.
  void deliver_later(int sig) { held_.push_front(sig); }

  // --- what GDB was told ----------------------------------------------------------------
  // Its own stop was reported, with this signal (0: none). It answers a stop GDB asked for
  // (vCont;t, ^C), whatever it was: our SIGSTOP, when it comes later, says nothing.
  void stop_reported(int sig) {
    resumed_ = false;
    reported_signal_ = sig;
    stop_says_ = -1;
  }
  // All-stop: a stop (its own or another thread's) ended the resume. A signal GDB gave it
  // that was not delivered yet is kept, not lost: delivered when it next runs.
  void resume_ended() {
    if (action_.signal != 0) {
      held_.push_back(take_resume_signal());
    }
    resumed_ = false;
  }
  // Non-stop: its stop was reported; the others run on.
  void no_longer_resumed() { resumed_ = false; }

 private:
  bool resumed_ = false;
  ThreadAction action_;
  int reported_signal_ = 0;
  int stop_says_ = -1;
  ThreadOptions options_;
  std::deque<int> held_;
};

}  // namespace tracer
