// What GDB asks to hear of single threads (QThreadOptions): the clones a thread makes, each new
// thread kept stopped until GDB resumes it, and its exit. GDB 15 and later ask it of the thread
// it steps over a breakpoint or a syscall, so that a thread born in the step does not run off
// from where the step left it (a displaced step's copy) and the step's end is not lost.
#include "tracer/linux/linux_target.hpp"

namespace tracer {

Result<void> LinuxTarget::set_thread_options(const std::vector<ThreadOptionsRule>& rules) {
  for (const ThreadOptionsRule& rule : rules) {
    for (auto& [pid, p] : processes_) {
      if (rule.pid != 0 && rule.pid != pid) {
        continue;
      }
      for (auto& [tid, t] : p->threads) {
        if (rule.tid == kAllThreads || rule.tid == tid) {
          t.gdb.set_options(rule.options);
        }
      }
    }
  }
  return base::success();
}

bool LinuxTarget::reports_exit_of(const LinuxThread& t) const {
  return report_thread_exits_ || t.gdb.options().exit_events;
}

}  // namespace tracer
