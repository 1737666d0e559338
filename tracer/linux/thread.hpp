// One traced thread as the core sees it: where it stands with the kernel (ThreadRun, the state
// machine in thread_run.hpp, its only writer), and GDB's view of it (resumed, the action GDB
// asked, a stop not reported yet, signals held for it), which the policies keep.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>

#include "tracer/linux/debug_registers.hpp"
#include "tracer/linux/registers.hpp"
#include "tracer/linux/thread_run.hpp"
#include "tracer/types.hpp"

namespace tracer {

// An event not reported yet, and when it happened among all of them (pending_events.hpp).
struct PendingStop {
  StopEvent event;
  std::uint64_t seq = 0;
};


struct LinuxThread {
  explicit LinuxThread(Kernel& kernel) : regs(kernel) {}

  Tid tid = 0;
  Pid pid = 0;
  ThreadRun run;  // between the kernel and us (thread_run.hpp)
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

  ThreadState state() const { return run.state(); }
  bool running() const { return run.running(); }
  bool stopped() const { return run.stopped(); }
  // Counts as stopped for stopping everything: it will not run on its own.
  bool settled() const {
    return run.state() == ThreadState::Stopped || run.state() == ThreadState::Zombie ||
           (in_vfork && run.state() != ThreadState::SteppingOver);
  }
};

}  // namespace tracer
