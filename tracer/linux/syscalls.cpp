// catch syscall (QCatchSyscalls): a process that catches syscalls runs with PTRACE_SYSCALL
// instead of PTRACE_CONT, and each syscall stop it makes is either reported (entry or return
// of a syscall GDB asked for) or let go. The kernel says which side of the syscall a stop is
// on (PTRACE_GET_SYSCALL_INFO), so a return whose entry was never seen (a step over the
// entry, a catch set inside vfork) is still a return.
#include <sys/ptrace.h>

#include <csignal>

#include "base/log.hpp"
#include "tracer/linux/code_view.hpp"
#include "tracer/linux/linux_target.hpp"
#include "tracer/linux/ptrace_calls.hpp"

namespace tracer {
namespace {

// syscall, sysenter, int $0x80: the instructions that enter the kernel for a syscall.
bool enters_syscall(const Bytes& code) {
  if (code.size() < 2) {
    return false;
  }
  return (code[0] == 0x0f && (code[1] == 0x05 || code[1] == 0x34)) || (code[0] == 0xcd && code[1] == 0x80);
}

}  // namespace

Result<void> LinuxTarget::set_catch_syscalls(const SyscallCatch& what) {
  Process* p = current();
  if (p == nullptr) {
    return base::make_error(base::Errc::no_process, "no process");
  }
  p->catch_syscalls = what;
  base::logf(base::LogCat::ptrace, "process {}: catching {} syscalls", p->pid,
             !what.enabled ? "no" : what.numbers.empty() ? "all" : std::to_string(what.numbers.size()));
  return base::success();
}

// A thread the collector single-steps would pass a syscall without a syscall stop: while
// its process catches syscalls, the syscall instruction (and the stop inside it) runs with
// PTRACE_SYSCALL instead. The collector hears of it at its stops (Collector::syscall_stopped):
// a call is no branch, but one that returns elsewhere (rt_sigreturn) is.
bool LinuxTarget::runs_to_syscall(Process& p, LinuxThread& t, bool step, bool collector_step) {
  if (!p.catch_syscalls.enabled || step) {
    return false;
  }
  if (!collector_step || t.in_syscall_stop) {
    return true;
  }
  auto pc = t.regs.pc(t.tid);
  if (!pc) {
    return false;
  }
  auto code = p.code.read_raw(*pc, 2);  // what runs next: an int3 of ours is no syscall
  return code && enters_syscall(*code);
}

// A syscall stop (SIGTRAP | 0x80): reported when GDB catches that syscall, else let go (and
// so is a call a collector's own code in the process made).
void LinuxTarget::syscall_stopped(Process& p, LinuxThread& t) {
  auto stop = kernel_.syscall_stop(t.tid);
  t.in_syscall_stop = stop && stop->entry;
  const bool caught = stop && p.catch_syscalls.catches(stop->number) && p.known_to_gdb;
  if (stop && p.collector && p.collector->tracing(t.tid)) {
    ProcessCodeView view(p);
    const bool programs = p.collector->syscall_stopped(t.tid, stop->entry, caught, view);
    t.regs.forget();
    if (!programs) {
      keep_going(p, t);
      if (t.stopped()) {
        // It stays stopped (every thread is being stopped for another's event): back in the
        // program's code, as at any stop.
        p.collector->thread_stopped(t.tid, view);
        t.regs.forget();
      }
      return;
    }
  }
  if (caught) {
    StopEvent ev{stop->entry ? StopReason::SyscallEntry : StopReason::SyscallReturn, p.pid, t.tid, SIGTRAP};
    ev.syscall = stop->number;
    make_pending(t, ev);
    return;
  }
  keep_going(p, t);
}

}  // namespace tracer
