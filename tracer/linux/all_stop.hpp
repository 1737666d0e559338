// All-stop's phase, the only writer of it: between a resume and the stop that ends it, whether
// every thread is being stopped to report an event, and whether GDB asked for an interrupt.
// The policy (policy.cpp) moves it on and reads it; pure, tested alone.
//
//   Idle ──resumed──▶ Running ──stopping──▶ Stopping ──(all settled)──reported──▶ Idle
//   Running ──interrupted──▶ Running + interrupt ── … ──reported (the SIGINT, or it lost the race)
#pragma once

namespace tracer {

class AllStopPhase {
 public:
  // A resume is in effect: its stop has not been reported.
  bool running() const { return running_; }
  // Every thread is being stopped to report an event: none may run on meanwhile.
  bool stopping() const { return stopping_; }
  // GDB's ^C (or a triage timeout) waits to be reported.
  bool interrupt_requested() const { return interrupt_; }

  void resumed() { running_ = true; }
  // ^C: true when something runs to be interrupted (the stop comes through poll()).
  bool interrupted() {
    if (!running_) {
      return false;
    }
    interrupt_ = true;
    return true;
  }
  // An event is to be reported: true the first time, when the SIGSTOPs must be sent.
  bool begin_stopping() {
    const bool first = !stopping_;
    stopping_ = true;
    return first;
  }
  // Every thread has settled: the event can be chosen.
  void settled() { stopping_ = false; }
  // A single-step's trap stands for the ^C that came meanwhile (GDB hears SIGINT).
  bool take_interrupt() {
    const bool was = interrupt_;
    interrupt_ = false;
    return was;
  }
  // The resume's stop went to GDB. An interrupt that lost the race to another event stays,
  // when a thread's stop is still waiting: the next resume stops at once with it, as the
  // SIGINT gdbserver sends would.
  void reported(bool interrupt_stays) {
    interrupt_ = interrupt_ && interrupt_stays;
    running_ = false;
  }
  // The threads GDB let run are all gone (scheduler locking): nothing more comes of this resume.
  void nothing_resumed() { running_ = false; }
  // No process left, or the mode changed: nothing to report on.
  void reset() { *this = AllStopPhase{}; }

 private:
  bool running_ = false;
  bool stopping_ = false;
  bool interrupt_ = false;
};

}  // namespace tracer
