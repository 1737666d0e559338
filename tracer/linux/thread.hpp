// One traced thread as the core sees it: a small state machine driven by what waitpid says
// and what the core asks of it. The core makes the ptrace calls and records the transitions, so every rule can be read (and tested) in one place.
//
//   Running ──request_stop──▶ StopRequested ──(any ptrace-stop)──▶ Stopped
//      ▲                                                               │
//      └────────────────────────── resumed ◀───────────────────────────┘
//   Stopped ──step_over──▶ SteppingOver ──(its trap, a signal, our SIGSTOP)──▶ Stopped
//   any ──(exit status)──▶ gone;   leader gone but threads alive ──▶ Zombie
#pragma once

#include <cstdint>
#include <deque>
#include <optional>

#include "tracer/linux/debug_registers.hpp"
#include "tracer/linux/registers.hpp"
#include "tracer/types.hpp"

namespace tracer {

// An event not reported yet, and when it happened among all of them (pending_events.hpp).
struct PendingStop {
  StopEvent event;
  std::uint64_t seq = 0;
};

enum class ThreadState {
  Running,        // resumed by the core; no ptrace-stop seen since
  StopRequested,  // running, and a SIGSTOP of ours is on its way
  Stopped,        // in a ptrace-stop
  SteppingOver,   // single-stepping the original instruction under one of our int3s
  Zombie,         // a leader that exited before its threads: never stops again
};

const char* to_string(ThreadState s);

struct LinuxThread {
  Tid tid = 0;
  Pid pid = 0;
  ThreadState state = ThreadState::Stopped;
  bool started = true;            // false for a new thread until its first (SIGSTOP) stop
  bool sigstop_expected = false;  // a SIGSTOP we sent has not been seen yet
  bool stepping = false;          // last resumed with PTRACE_SINGLESTEP
  bool collector_step = false;    // ... because its collector asked for a step
  // GDB's view: the thread was resumed and its stop not reported yet (all-stop: part of the
  // current resume; non-stop: running as far as GDB knows).
  bool resumed = false;
  ThreadAction action;               // what GDB's resume asked of it
  std::optional<PendingStop> pending;  // stopped with this to report (pending_events.hpp)
  int reported_signal = 0;           // the signal of its stop GDB heard of, until it runs again
  int stop_signal_for_gdb = -1;      // non-stop vCont;t / vCtrlC: report our SIGSTOP as this
  bool from_gdb_resume = false;      // GDB resumed it where it stopped: an int3 of ours at its
                                     // pc is stepped over, not hit (unless GDB moved the pc)
  Addr stop_pc = 0;                  // pc at its last stop (after a breakpoint's rewind)
  // Stopped inside a syscall: the exec stop of a launch, where GDB first sees the program. The
  // kernel reports a single-step from here at the syscall's exit, as a SIGTRAP (TRAP_BRKPT)
  // before any instruction ran. step_from_syscall_stop: resumed with a step from such a stop
  // at this pc; that report is not the step, which goes on. (Fork and exec events met while
  // GDB steps over the syscall are left alone: there that report ends GDB's step, as with
  // gdbserver.)
  bool in_syscall_stop = false;
  std::optional<Addr> step_from_syscall_stop;
  bool paused_for_step_over = false; // stopped by the core for another thread's step-over
  bool in_vfork = false;             // waiting in vfork for its child: cannot stop until vforkdone
  int step_over_signal = 0;          // the signal the step-over delivers
  Addr out_of_line_from = 0;         // stopped before running its slot: pc shows the breakpoint
  Addr range_stop = 0;               // runs to our int3 here, in place of stepping its range
  std::deque<int> held_signals;      // GDB resumed it with these, but it never ran (another
                                     // thread's event was reported first): delivered, oldest
                                     // first, each time it runs from now on
  DrValues dr;                       // debug registers as last written to it
  RegisterCache regs;                // its registers at this stop (forgotten when it runs)

  bool running() const { return state == ThreadState::Running || state == ThreadState::StopRequested ||
                                state == ThreadState::SteppingOver; }
  bool stopped() const { return state == ThreadState::Stopped; }
  // Counts as stopped for stopping everything: it will not run on its own.
  bool settled() const {
    return state == ThreadState::Stopped || state == ThreadState::Zombie ||
           (in_vfork && state != ThreadState::SteppingOver);
  }
};

}  // namespace tracer
