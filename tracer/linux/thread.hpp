// One traced thread as the core sees it: where it stands with the kernel (ThreadRun,
// thread_run.hpp), GDB's view of it (GdbView, gdb_view.hpp), a stop not reported yet (kept
// for PendingEvents, which alone reads and writes it), and what its range runs and syscall stops
// need. Whether it steps over an int3 is its process's StepOver's (step_over.hpp).
#pragma once

#include <cstdint>
#include <deque>
#include <optional>

#include "tracer/linux/debug_registers.hpp"
#include "tracer/linux/gdb_view.hpp"
#include "tracer/linux/registers.hpp"
#include "tracer/linux/step_over.hpp"
#include "tracer/linux/thread_run.hpp"
#include "tracer/types.hpp"

namespace tracer {

// An event not reported yet, and when it happened among all of them (pending_events.hpp).
struct PendingStop {
  StopEvent event;
  std::uint64_t seq = 0;
};

class PendingEvents;

struct LinuxThread {
  explicit LinuxThread(Kernel& kernel) : regs(kernel) {}

  Tid tid = 0;
  Pid pid = 0;
  ThreadRun run;  // between the kernel and us (thread_run.hpp)
  GdbView gdb;    // as GDB sees it (gdb_view.hpp)
  Addr stop_pc = 0;                  // pc at its last stop (after a breakpoint's rewind)
  // The tracepoint it collected at, until it stops elsewhere (0: none): resumed there, it
  // steps over it without collecting again (tracepoints.cpp).
  Addr collected_at = 0;
  // Collecting a tracepoint's while-stepping: single-stepped, each step a frame, `done` of
  // `total` so far (tracepoints.cpp).
  struct WhileStepping {
    std::uint32_t tracepoint = 0;
    Addr address = 0;
    std::uint64_t done = 0;
    std::uint64_t total = 0;
  };
  std::optional<WhileStepping> while_stepping;
  // Stopped inside a syscall: the exec stop of a launch, where GDB first sees the program. The
  // kernel reports a single-step from here at the syscall's exit, as a SIGTRAP (TRAP_BRKPT)
  // before any instruction ran. step_from_syscall_stop: resumed with a step from such a stop
  // at this pc; that report is not the step, which goes on. (Fork and exec events met while
  // GDB steps over the syscall are left alone: there that report ends GDB's step, as with
  // gdbserver.)
  bool in_syscall_stop = false;
  std::optional<Addr> step_from_syscall_stop;
  bool in_vfork = false;             // waiting in vfork for its child: cannot stop until vforkdone
  Addr out_of_line_from = 0;         // stopped before running its slot: pc shows the breakpoint
  Addr range_stop = 0;               // runs to our int3 here, in place of stepping its range
  DrValues dr;                       // debug registers as last written to it
  RegisterCache regs;                // its registers at this stop (forgotten when it runs)

  ThreadState state() const { return run.state(); }
  bool running() const { return run.running(); }
  bool stopped() const { return run.stopped(); }
  // Counts as stopped for stopping everything: it will not run on its own (step_over: its
  // process's; a thread stepping over an int3 runs whatever else it waits for).
  bool settled(const StepOver& step_over) const {
    return run.state() == ThreadState::Stopped || run.state() == ThreadState::Zombie ||
           (in_vfork && !step_over.stepping(tid));
  }

 private:
  friend class PendingEvents;
  std::optional<PendingStop> pending_;  // stopped with this to report (pending_events.hpp)
};

}  // namespace tracer
