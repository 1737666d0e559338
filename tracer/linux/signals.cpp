// QPassSignals: signals delivered straight back to the thread that stopped with them,
// without a stop reply, as long as GDB wants that thread running.
#include <csignal>

#include "base/log.hpp"
#include "tracer/linux/linux_target.hpp"

namespace tracer {

bool LinuxTarget::pass_signal(Process& p, LinuxThread& t, int sig) {
  if (sig == SIGTRAP || sig == SIGSTOP || pass_signals_.count(sig) == 0) {
    return false;
  }
  // While stopping every thread it cannot run again: then GDB sees it and passes it with C.
  if (!t.gdb.resumed() || PendingEvents::has_stop(t) || p.frozen || (all_stop() && all_stop_.stopping())) {
    return false;
  }
  // Nor while GDB steps the thread: GDB steps over the handler itself (a step-resume
  // breakpoint), which it can only do if it hears of the signal, as from gdbserver.
  if (t.gdb.stepping()) {
    return false;
  }
  if (p.paused) {
    t.gdb.deliver_when_run(sig);  // threads of it are stopped for a moment (with_threads_paused)
    return true;
  }
  if (p.step_over.holds(t.tid)) {
    t.gdb.deliver_when_run(sig);  // another thread steps over an int3: this one waits for it
    p.step_over.pause(t.tid);
    try_begin_step_over(p);
    return true;
  }
  base::logf(base::LogCat::ptrace, "thread {}: passing signal {}", t.tid, sig);
  if (auto res = run_thread(p, t, sig); !res) {
    base::logf(base::LogCat::ptrace, "resume {}: {}", t.tid, res.error().message());
  }
  return true;
}

}  // namespace tracer
