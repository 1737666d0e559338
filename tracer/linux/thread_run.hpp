// Where one traced thread stands between the kernel and us: a state machine fed by named
// events (what waitpid said, what the core did), the only writer of these facts. Pure: no
// ptrace; the core makes the calls and tells it what happened, and tests drive it alone.
//
//   born ──(first stop)──▶ Stopped            attached ──(its SIGSTOP)──▶ Stopped
//   Running ──stop_requested──▶ StopRequested ──(any ptrace-stop)──▶ Stopped
//      ▲                                                               │
//      └────────────────────────────── ran ◀───────────────────────────┘
//   running, leader gone but threads alive ──became_zombie──▶ Zombie (never stops again)
#pragma once

#include <csignal>
#include <cstdint>

namespace tracer {

enum class ThreadState {
  Running,        // resumed by the core; no ptrace-stop seen since
  StopRequested,  // running, and a SIGSTOP of ours is on its way
  Stopped,        // in a ptrace-stop
  Zombie,         // a leader that exited before its threads: never stops again
};

const char* to_string(ThreadState s);

class ThreadRun {
 public:
  ThreadState state() const { return state_; }
  bool started() const { return started_; }                    // its first stop was seen
  bool sigstop_expected() const { return sigstop_expected_; }  // a SIGSTOP of ours is on its way
  bool stepping() const { return stepping_; }                  // last run with PTRACE_SINGLESTEP
  bool collector_step() const { return collector_step_; }      // ... because its collector asked
  bool running() const {
    return state_ == ThreadState::Running || state_ == ThreadState::StopRequested;
  }
  bool stopped() const { return state_ == ThreadState::Stopped; }

  // --- how it came to us --------------------------------------------------------------------
  // A new thread or fork child: running until its first stop (the SIGSTOP the kernel queues).
  void born() {
    *this = ThreadRun{};
    state_ = ThreadState::Running;
    started_ = false;
  }
  // PTRACE_ATTACH sent: running until the SIGSTOP it causes.
  void attaching() {
    *this = ThreadRun{};
    state_ = ThreadState::Running;
    sigstop_expected_ = true;
  }

  // --- what the core did ---------------------------------------------------------------------
  // A SIGSTOP may be sent to stop it: it runs, none is on its way, it has started.
  bool may_request_stop() const { return running() && !sigstop_expected_ && started_; }
  // Our SIGSTOP was sent.
  void stop_requested() {
    sigstop_expected_ = true;
    if (state_ == ThreadState::Running) {
      state_ = ThreadState::StopRequested;
    }
  }
  // Resumed (continue, syscall, single-step: step says; collector_step: for its collector).
  void ran(bool step, bool for_collector) {
    state_ = ThreadState::Running;
    stepping_ = step;
    collector_step_ = for_collector;
  }
  // An exec made it the process's only thread: it stepped as the thread that called exec did.
  void took_over_from(const ThreadRun& execer) { stepping_ = execer.stepping_; }

  // --- what the kernel said ------------------------------------------------------------------
  struct Seen {
    ThreadState was;  // before this stop
    bool first;       // its first stop since it was born (then state was Running)
  };
  // Any ptrace-stop.
  Seen saw_stop() {
    const Seen seen{state_, !started_};
    state_ = ThreadState::Stopped;
    started_ = true;
    return seen;
  }
  // That stop was none (a step reported at a syscall's exit before it ran): as before it.
  void stop_undone(const Seen& seen) { state_ = seen.was; }
  // sig is the SIGSTOP we sent: taken, it is not the program's.
  bool took_our_sigstop(int sig) {
    if (sig != SIGSTOP || !sigstop_expected_) {
      return false;
    }
    sigstop_expected_ = false;
    return true;
  }
  // The stop was a signal-delivery-stop for sig (0: another kind of stop).
  void stopped_with(int sig) { stop_signal_ = sig; }
  int stop_signal() const { return stop_signal_; }
  // It runs delivering sig in place of its stop's own: should the thread block sig, the
  // kernel queues it again as sent by the tracer, and it comes back as a stop of its own.
  void runs_delivering(int sig) {
    if (sig > 0 && sig < 64 && sig != stop_signal_) {
      injected_ |= 1ull << sig;
    }
  }
  // sig may be one of those (no question asked of the kernel otherwise).
  bool injected(int sig) const { return sig > 0 && sig < 64 && (injected_ & (1ull << sig)) != 0; }
  // sig, sent by the tracer, is one of those coming back (once).
  bool took_injected(int sig) {
    const std::uint64_t bit = sig > 0 && sig < 64 ? 1ull << sig : 0;
    const bool was = (injected_ & bit) != 0;
    injected_ &= ~bit;
    return was;
  }
  // A leader that exited while its threads live: never stops again.
  void became_zombie() { state_ = ThreadState::Zombie; }
  // Its process ended while GDB has not heard: shown stopped until then.
  void ended() { state_ = ThreadState::Stopped; }
  // Resumed at detach and not stopped again: gone from us (running).
  void let_go() { state_ = ThreadState::Running; }

 private:
  ThreadState state_ = ThreadState::Stopped;
  bool started_ = true;
  bool sigstop_expected_ = false;
  bool stepping_ = false;
  bool collector_step_ = false;
  int stop_signal_ = 0;
  std::uint64_t injected_ = 0;  // bit n: signal n delivered in place of another
};

}  // namespace tracer
