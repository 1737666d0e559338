// The wait loop: drains waitpid, classifies each stop, keeps all-stop (stop every other
// thread when one has something to report) and hands out one StopEvent at a time.
#include <sys/ptrace.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>

#include "base/log.hpp"
#include "tracer/linux/linux_target.hpp"
#include "tracer/linux/pending_events.hpp"
#include "tracer/linux/procfs.hpp"
#include "tracer/linux/ptrace_calls.hpp"

namespace tracer {
void LinuxTarget::drain_signalfd() {
  signalfd_siginfo info;
  while (sfd_ >= 0 && ::read(sfd_, &info, sizeof info) == sizeof info) {
  }
}

std::optional<StopEvent> LinuxTarget::poll() {
  std::uint64_t step_deadline = 0;
  do {
    drain_signalfd();
    for (;;) {
      int st = 0;
      Tid w = ::waitpid(-1, &st, __WALL | WNOHANG);
      if (w < 0 && errno == EINTR) {
        continue;
      }
      if (w <= 0) {
        break;
      }
      handle_status(w, st);
    }
  } while (soft_step_wait(step_deadline));  // traced threads single-stepping
  return take_report();
}

void LinuxTarget::handle_status(Tid tid, int status) {
  base::logf(base::LogCat::ptrace, "waitpid: {} status {:#x}", tid, status);
  if (WIFEXITED(status) || WIFSIGNALED(status)) {
    handle_exit(tid, status);
    return;
  }
  if (!WIFSTOPPED(status) || !has_process()) {
    return;
  }
  Thread* t = find(tid);
  if (t == nullptr && procfs::thread_group_of(tid).value_or(pid_) != pid_) {
    // A forked child whose first stop came before its parent's fork event.
    stopped_fork_children_.insert(tid);
    return;
  }
  if (t == nullptr) {
    // A new thread whose first stop came before its parent's clone event.
    t = &add_thread(tid);
    t->seen_initial_stop = false;
    t->resumed = running_;
  }
  t->stopped = true;
  const int sig = WSTOPSIG(status);
  const int event = status >> 16;
  if (!t->seen_initial_stop) {
    t->seen_initial_stop = true;
    if (sig == SIGSTOP) {
      if (running_ && !stopping_) {
        continue_internally(*t);
      }
      return;
    }
  }
  if (sig == SIGTRAP && event != 0) {
    handle_event(*t, event);
    return;
  }
  if (sig == (SIGTRAP | 0x80)) {
    continue_internally(*t);  // a syscall stop we did not ask for
    return;
  }
  handle_signal_stop(*t, sig);
}

void LinuxTarget::handle_exit(Tid tid, int status) {
  if (tid != pid_ || !has_process()) {
    threads_.erase(tid);  // one thread gone: not a stop
    forget_btrace(tid);
    return;
  }
  StopEvent ev;
  ev.pid = pid_;
  ev.tid = tid;
  if (WIFEXITED(status)) {
    ev.reason = StopReason::Exited;
    ev.status = WEXITSTATUS(status);
  } else {
    ev.reason = StopReason::Killed;
    ev.signal = WTERMSIG(status);
  }
  base::logf(base::LogCat::ptrace, "process {} {} {}", pid_,
             ev.reason == StopReason::Exited ? "exited with status" : "killed by signal",
             ev.reason == StopReason::Exited ? ev.status : ev.signal);
  forget_process();
  exit_event_ = ev;
}

void LinuxTarget::handle_event(Thread& t, int event) {
  if (event == PTRACE_EVENT_CLONE) {
    if (auto msg = pt::event_message(t.tid)) {
      Tid child = static_cast<Tid>(*msg);
      if (find(child) == nullptr) {
        Thread& c = add_thread(child);
        c.stopped = false;
        c.seen_initial_stop = false;
        c.resumed = running_;
      }
    }
  } else if (event == PTRACE_EVENT_FORK || event == PTRACE_EVENT_VFORK) {
    if (auto msg = pt::event_message(t.tid)) {
      release_fork_child(static_cast<Pid>(*msg), event == PTRACE_EVENT_VFORK);
    }
  } else if (event == PTRACE_EVENT_EXEC) {
    // The new image: other threads are gone, the reporter became the leader, our int3s
    // vanished with the old memory. Not reported (StopEvent has no exec reason yet).
    Thread self = t;
    self.tid = pid_;
    self.dr = DrValues{};  // exec clears the debug registers
    threads_.clear();
    threads_[pid_] = self;
    breakpoints_.clear();
    forget_btrace(0);
    (void)memory_.open(pid_);
    if (report_exec_) {
      StopEvent ev{StopReason::Exec, pid_, pid_, SIGTRAP};
      ev.exec_path = exec_file(pid_).value_or("");
      make_pending(threads_[pid_], std::move(ev));
      return;
    }
    continue_internally(threads_[pid_]);
    return;
  }
  continue_internally(t);
}

void LinuxTarget::handle_signal_stop(Thread& t, int sig) {
  if (sig == SIGSTOP && t.sigstop_expected) {
    t.sigstop_expected = false;  // ours: swallow it
    if (running_ && !stopping_ && t.resumed && !t.pending) {
      continue_internally(t);
    }
    return;
  }
  if (pass_signal(t, sig)) {
    return;
  }
  std::optional<StopEvent> ev;
  if (sig == SIGTRAP) {
    ev = classify_trap(t);
  } else {
    ev = StopEvent{StopReason::Signal, pid_, t.tid, sig};
  }
  if (ev) {
    make_pending(t, *ev);
  }
}

std::optional<StopEvent> LinuxTarget::classify_trap(Thread& t) {
  if (auto soft = soft_step_trap(t); soft.kind == StepOutcome::Kind::Report) {
    return soft.event;
  } else if (soft.kind == StepOutcome::Kind::Continue) {
    return std::nullopt;  // a traced thread's step: stepped on (or left stopped)
  }
  StopEvent ev{StopReason::Signal, pid_, t.tid, SIGTRAP};
  auto si = pt::get_siginfo(t.tid);
  auto pc = pt::get_pc(t.tid);
  if (!si || !pc) {
    return ev;
  }
  const int code = si->si_code;
  if (auto hw = debug_trap(t); hw.kind == DebugTrap::Kind::Report) {
    return hw.event;
  } else if (hw.kind == DebugTrap::Kind::Ignored && !t.stepping) {
    continue_internally(t);
    return std::nullopt;
  }
  if ((code == SI_KERNEL || code == TRAP_BRKPT) && breakpoints_.contains(*pc - 1)) {
    (void)pt::set_pc(t.tid, *pc - 1);
    ev.reason = StopReason::SoftwareBreakpoint;
    return ev;
  }
  if (t.stepping || code == TRAP_TRACE) {
    const ThreadAction& a = t.action;
    const bool in_range = a.kind == ResumeKind::RangeStep && a.range_start <= *pc &&
                          *pc < a.range_end;
    if (in_range && !breakpoints_.contains(*pc)) {
      if (running_ && !stopping_) {
        continue_internally(t);  // keep stepping through the range
      }
      return std::nullopt;  // when stopping: just stopped, GDB will resume it again
    }
    ev.reason = StopReason::SingleStep;
  }
  return ev;
}

void LinuxTarget::make_pending(Thread& t, StopEvent ev) {
  base::logf(base::LogCat::ptrace, "thread {}: pending stop, reason {} signal {}", t.tid,
             static_cast<int>(ev.reason), ev.signal);
  t.pending = ev;
  t.pending_seq = ++event_seq_;
}

// Lets a thread go on as it was resumed after an event that is not reported.
void LinuxTarget::continue_internally(Thread& t) {
  if (!running_ || stopping_ || !t.resumed || t.pending) {
    return;
  }
  if (auto res = run_thread(t, t.stepping, 0); !res) {
    base::logf(base::LogCat::ptrace, "resume {}: {}", t.tid, res.error().message());
  }
}

// SIGSTOP every running thread and wait until each is stopped (or gone). Events that
// come first are kept pending; our SIGSTOPs are swallowed when they arrive. Linear in the
// number of threads per event, so stopping 1000 threads stays cheap.
void LinuxTarget::stop_all() {
  stopping_ = true;
  auto send_sigstops = [this] {
    for (auto& [tid, t] : threads_) {
      if (!t.stopped && !t.sigstop_expected && t.seen_initial_stop) {
        if (pt::tgkill(pid_, tid, SIGSTOP)) {
          t.sigstop_expected = true;
        }
      }
    }
  };
  auto all_stopped = [this] {
    for (const auto& [tid, t] : threads_) {
      if (!t.stopped || !t.seen_initial_stop) {
        return false;
      }
    }
    return true;
  };
  // A zombie (a leader that called pthread_exit) never stops: forget it; the process exit
  // still arrives as the leader's status. Checked only when no event is waiting.
  auto forget_zombies = [this] {
    for (auto it = threads_.begin(); it != threads_.end();) {
      const Thread& t = it->second;
      if (!t.stopped && t.seen_initial_stop) {
        auto st = procfs::task_stat(pid_, t.tid);
        if (st && (st->state == 'Z' || st->state == 'X')) {
          it = threads_.erase(it);
          continue;
        }
      }
      ++it;
    }
  };
  send_sigstops();
  while (has_process() && !all_stopped()) {
    int st = 0;
    Tid w = ::waitpid(-1, &st, __WALL | WNOHANG);
    if (w == 0) {
      forget_zombies();
      if (all_stopped()) {
        break;
      }
      w = ::waitpid(-1, &st, __WALL);
    }
    if (w < 0) {
      if (errno == EINTR) {
        continue;
      }
      break;
    }
    const std::size_t known = threads_.size();
    handle_status(w, st);
    if (threads_.size() > known) {
      send_sigstops();  // a thread created while stopping has to be stopped as well
    }
  }
  stopping_ = false;
}

std::optional<StopEvent> LinuxTarget::take_report() {
  if (exit_event_) {
    StopEvent ev = *exit_event_;
    exit_event_.reset();
    running_ = false;
    return ev;
  }
  if (!running_) {
    return std::nullopt;
  }
  if (oldest_pending(threads_) == nullptr && !interrupt_requested_) {
    return std::nullopt;
  }
  stop_all();
  if (exit_event_) {
    return take_report();
  }
  Thread* best = oldest_pending(threads_);
  StopEvent ev;
  if (best != nullptr) {
    ev = *best->pending;
    best->pending.reset();
  } else {
    // interrupt(): report the stop as SIGINT, like a ^C at a terminal.
    Thread* t = find(pid_);
    if (t == nullptr && !threads_.empty()) {
      t = &threads_.begin()->second;
    }
    ev = StopEvent{StopReason::Signal, pid_, t != nullptr ? t->tid : pid_, SIGINT};
  }
  interrupt_requested_ = false;
  running_ = false;
  for (auto& [tid, t] : threads_) {
    t.resumed = false;
  }
  base::logf(base::LogCat::ptrace, "report: thread {} reason {} signal {}", ev.tid,
             static_cast<int>(ev.reason), ev.signal);
  return ev;
}

}  // namespace tracer
