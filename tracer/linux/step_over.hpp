// A step over one of our int3s in place, in one address space: which thread steps, over which
// address, the signal its step delivers, which other threads were paused for it (GDB wants
// them running: they go on once it is over) and how far it got. The only record of it: threads
// and GDB's view of them ask it, and starting, beginning, finishing and abandoning it are its
// named events. Pure; the core makes the ptrace calls and puts the byte back (resume.cpp);
// tested alone (test_step_over.cpp).
//
//   None ──start──▶ Pausing ──began──▶ Stepping ──finish──▶ None
//                      └────────── abandon / finish ──────────▶ None
#pragma once

#include <cassert>
#include <set>
#include <utility>

#include "tracer/types.hpp"

namespace tracer {

class StepOver {
 public:
  enum class Phase {
    None,      // no step-over
    Pausing,   // the other threads of the address space are being stopped for it
    Stepping,  // the original byte is in memory; its thread single-steps it
  };
  // What a step-over left behind when it ended.
  struct Ended {
    bool lifted = false;  // it had begun: the int3 goes back (if an owner still wants it)
    Addr addr = 0;
    std::set<Tid> paused;  // the threads to let go
  };

  Phase phase() const { return phase_; }
  bool active() const { return phase_ != Phase::None; }
  bool pausing() const { return phase_ == Phase::Pausing; }
  Tid thread() const { return tid_; }  // the thread that steps (0: none)
  Addr addr() const { return addr_; }
  // tid is the thread that steps over (in either phase).
  bool of(Tid tid) const { return active() && tid == tid_; }
  // tid is single-stepping the original instruction now.
  bool stepping(Tid tid) const { return phase_ == Phase::Stepping && tid == tid_; }
  // tid must wait: another thread's step-over is on.
  bool holds(Tid tid) const { return active() && tid != tid_; }
  // tid was stopped for it while GDB wants it running.
  bool paused(Tid tid) const { return paused_.count(tid) != 0; }
  const std::set<Tid>& paused_threads() const { return paused_; }

  // --- its events -------------------------------------------------------------------------
  // tid, stopped on an int3 of ours at addr, steps over it delivering sig; the other threads
  // are stopped first.
  void start(Tid tid, Addr addr, int sig) {
    assert(!active());
    *this = StepOver{};
    phase_ = Phase::Pausing;
    tid_ = tid;
    addr_ = addr;
    signal_ = sig;
  }
  // Another thread GDB wants running stopped for it (or is being stopped): it goes on after.
  void pause(Tid tid) {
    if (holds(tid)) {
      paused_.insert(tid);
    }
  }
  // That thread no longer waits for it to go on (GDB stopped it, it died).
  void unpause(Tid tid) { paused_.erase(tid); }
  // The original byte is in memory and the thread steps: the signal it delivers (once).
  int began() {
    assert(phase_ == Phase::Pausing);
    phase_ = Phase::Stepping;
    return std::exchange(signal_, 0);
  }
  // It is over, however it ended: its thread stopped (its trap, a signal, our SIGSTOP, an
  // event of the stepped syscall), died, or the process is let go (detach, kill). What to undo.
  Ended finish() {
    Ended ended{phase_ == Phase::Stepping, addr_, std::move(paused_)};
    *this = StepOver{};
    return ended;
  }
  // It will not begin, or nothing of it is left in memory: its thread is gone before it
  // stepped, all-stop stopped everything first, or an exec replaced the program. The threads
  // it paused are theirs again (GDB's resume decides).
  void abandon() { *this = StepOver{}; }

 private:
  Phase phase_ = Phase::None;
  Tid tid_ = 0;
  Addr addr_ = 0;
  int signal_ = 0;
  std::set<Tid> paused_;
};

}  // namespace tracer
