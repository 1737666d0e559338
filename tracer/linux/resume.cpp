// Resuming per vCont plan: pending events first, stepping over our own int3s with the
// other threads held, then PTRACE_CONT / PTRACE_SINGLESTEP; and interrupt().
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>

#include "base/log.hpp"
#include "tracer/linux/linux_target.hpp"
#include "tracer/linux/ptrace_calls.hpp"

namespace tracer {
namespace {

const ThreadAction* action_for(const ResumePlan& plan, Tid tid) {
  for (const auto& a : plan.actions) {
    if (a.tid == tid) {
      return &a;
    }
  }
  for (const auto& a : plan.actions) {
    if (a.tid == kAllThreads) {
      return &a;
    }
  }
  return nullptr;
}

bool in_range(const ThreadAction& a, Addr pc) {
  return a.kind == ResumeKind::RangeStep && a.range_start <= pc && pc < a.range_end;
}

}  // namespace

Result<void> LinuxTarget::run_thread(Thread& t, bool step, int sig) {
  sync_debug_registers(t);
  const bool traced = soft_step_begin(t, sig);  // branch tracing: single-step instead
  auto res = pt::resume(t.tid, step || traced, sig);
  if (res) {
    t.stopped = false;
    t.stepping = step;
  } else if (res.error().code == base::Errc::no_thread) {
    // Died under us (SIGKILL from outside): its exit status is on the way.
    t.stopped = false;
  }
  return res;
}

// Runs the original instruction under our int3 at pc with one single-step while every
// other thread stays stopped. Returns true when the thread may go on as asked, false
// when the step ended in something to report (kept pending) or the process died.
Result<bool> LinuxTarget::step_over_breakpoint(Thread& t, int sig) {
  auto pc = pt::get_pc(t.tid);
  if (!pc) {
    return std::move(pc).error();
  }
  const Addr addr = *pc;
  const Tid tid = t.tid;
  const auto original = breakpoints_.original(addr);
  if (!original) {
    return true;
  }
  base::logf(base::LogCat::ptrace, "thread {}: stepping over int3 at {:#x}", t.tid, addr);
  if (auto res = memory_.write(addr, Bytes{*original}); !res) {
    return std::move(res).error();
  }
  bool go_on = false;
  auto res = run_thread(t, true, sig);
  while (res) {
    int st = 0;
    Tid w = ::waitpid(tid, &st, __WALL);
    if (w < 0) {
      if (errno == EINTR) {
        continue;
      }
      res = base::sys_error("waitpid " + std::to_string(t.tid));
      break;
    }
    if (!finish_step_over(t, st)) {
      continue;
    }
    const Thread* self = find(tid);  // gone if the step ended in its exit
    go_on = self != nullptr && self->stopped && !self->pending;
    break;
  }
  if (has_process()) {
    (void)memory_.write(addr, Bytes{kInt3});
  }
  if (!res) {
    return std::move(res).error();
  }
  return go_on;
}

// One wait status of a step-over: false while the step has not finished yet.
bool LinuxTarget::finish_step_over(Thread& t, int status) {
  const Tid tid = t.tid;
  if (WIFEXITED(status) || WIFSIGNALED(status)) {
    handle_exit(tid, status);
    return true;
  }
  const int sig = WSTOPSIG(status);
  const int event = status >> 16;
  t.stopped = true;
  if (sig == SIGSTOP && t.sigstop_expected) {
    t.sigstop_expected = false;
    return !run_thread(t, true, 0).ok();
  }
  if (sig == SIGTRAP && event != 0) {
    if (event == PTRACE_EVENT_CLONE) {
      if (auto msg = pt::event_message(tid); msg && find(static_cast<Tid>(*msg)) == nullptr) {
        Thread& c = add_thread(static_cast<Tid>(*msg));
        c.stopped = false;
        c.seen_initial_stop = false;
      }
    }
    return !run_thread(t, true, 0).ok();
  }
  if (sig == SIGTRAP || sig == (SIGTRAP | 0x80)) {
    soft_step_after_step_over(t);
    if (auto hw = debug_trap(t); hw.kind == DebugTrap::Kind::Report) {
      make_pending(t, hw.event);  // the stepped instruction hit a watchpoint
    }
    return true;  // the step is done
  }
  make_pending(t, StopEvent{StopReason::Signal, pid_, tid, sig});
  return true;
}

Result<void> LinuxTarget::resume(const ResumePlan& plan) {
  if (!has_process()) {
    return base::make_error(base::Errc::no_process, "no process");
  }
  if (running_) {
    return base::make_error(base::Errc::invalid, "already running");
  }
  std::vector<std::pair<Thread*, ThreadAction>> todo;
  for (auto& [tid, t] : threads_) {
    const ThreadAction* a = action_for(plan, tid);
    if (a != nullptr && a->kind != ResumeKind::Stop && t.stopped) {
      todo.emplace_back(&t, *a);
    }
  }
  if (todo.empty()) {
    return base::make_error(base::Errc::invalid, "no thread to resume");
  }
  refresh_read_watches();
  running_ = true;
  bool pending = false;
  for (auto& [t, a] : todo) {
    t->resumed = true;
    t->action = a;
    pending = pending || t->pending.has_value();
  }
  // A stop not reported yet ends this resume at once, nothing runs.
  if (pending) {
    kick_event_fd();
    return base::success();
  }
  // Threads sitting on one of our int3s first execute the original instruction.
  for (auto& [t, a] : todo) {
    auto pc = pt::get_pc(t->tid);
    if (!pc || !breakpoints_.contains(*pc)) {
      continue;
    }
    auto go_on = step_over_breakpoint(*t, a.signal);
    if (!go_on) {
      running_ = false;
      return std::move(go_on).error();
    }
    a.signal = 0;  // delivered with the step
    if (!*go_on) {
      kick_event_fd();  // exit or a signal to report
      return base::success();
    }
    auto now = pt::get_pc(t->tid);
    if (a.kind == ResumeKind::Step || (a.kind == ResumeKind::RangeStep && now && !in_range(a, *now)) ||
        (a.kind == ResumeKind::RangeStep && now && breakpoints_.contains(*now))) {
      make_pending(*t, StopEvent{StopReason::SingleStep, pid_, t->tid, SIGTRAP});
      kick_event_fd();
      return base::success();
    }
  }
  for (auto& [t, a] : todo) {
    const bool step = a.kind != ResumeKind::Continue;
    if (auto res = run_thread(*t, step, a.signal); !res) {
      base::logf(base::LogCat::ptrace, "resume {}: {}", t->tid, res.error().message());
    }
  }
  return base::success();
}

Result<void> LinuxTarget::interrupt() {
  if (!has_process()) {
    return base::make_error(base::Errc::no_process, "no process");
  }
  if (!running_) {
    return base::success();
  }
  interrupt_requested_ = true;
  kick_event_fd();  // poll() stops every thread with SIGSTOP and reports SIGINT
  return base::success();
}

// Makes the signalfd readable so the server calls poll() even though no child changed.
void LinuxTarget::kick_event_fd() {
  ::syscall(SYS_tgkill, ::getpid(), ::gettid(), SIGCHLD);
}

}  // namespace tracer
