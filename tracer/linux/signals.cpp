// QPassSignals: signals delivered straight back to the thread that stopped with them,
// without a stop reply, as long as the process is running on.
#include <csignal>

#include "base/log.hpp"
#include "tracer/linux/linux_target.hpp"

namespace tracer {

bool LinuxTarget::pass_signal(Thread& t, int sig) {
  if (sig == SIGTRAP || sig == SIGSTOP || pass_signals_.count(sig) == 0) {
    return false;
  }
  // While stopping every thread it cannot run again: then GDB sees it and passes it with C.
  if (!running_ || stopping_ || !t.resumed || t.pending) {
    return false;
  }
  base::logf(base::LogCat::ptrace, "thread {}: passing signal {}", t.tid, sig);
  if (auto res = run_thread(t, t.stepping, sig); !res) {
    base::logf(base::LogCat::ptrace, "resume {}: {}", t.tid, res.error().message());
  }
  return true;
}

}  // namespace tracer
