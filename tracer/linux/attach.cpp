// Attaching to a running process (every thread), detaching from it, and killing it.
#include <sys/ptrace.h>
#include <sys/wait.h>

#include <csignal>
#include <cstring>
#include <set>

#include "base/log.hpp"
#include "tracer/linux/linux_target.hpp"
#include "tracer/linux/procfs.hpp"
#include "tracer/linux/ptrace_calls.hpp"

namespace tracer {
namespace {

// No EXITKILL: an attached process must survive the server.
constexpr long kAttachOptions = PTRACE_O_TRACECLONE | PTRACE_O_TRACEEXEC | PTRACE_O_TRACESYSGOOD |
                                PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK;

base::Error attach_error(Pid pid, int err) {
  if (err == ESRCH) {
    return base::Error{base::Errc::no_process, 0, "no such process " + std::to_string(pid)};
  }
  return base::Error{base::Errc::system, err,
                     "cannot attach to process " + std::to_string(pid) + ": " + std::strerror(err)};
}

}  // namespace

// PTRACE_ATTACH one thread and wait for its SIGSTOP. A different signal arriving first
// becomes that thread's pending event; the SIGSTOP then stays expected.
Result<void> LinuxTarget::attach_thread(Tid tid) {
  auto res = pt::attach(tid);
  if (!res) {
    return res;
  }
  Thread& t = add_thread(tid);
  t.stopped = false;
  t.sigstop_expected = true;
  for (;;) {
    int st = 0;
    Tid w = ::waitpid(tid, &st, __WALL);
    if (w < 0) {
      if (errno == EINTR) {
        continue;
      }
      threads_.erase(tid);
      return base::sys_error("waitpid " + std::to_string(tid));
    }
    base::logf(base::LogCat::ptrace, "attach: waitpid({}) status {:#x}", tid, st);
    if (WIFEXITED(st) || WIFSIGNALED(st)) {
      threads_.erase(tid);
      return base::make_error(base::Errc::no_thread, "thread exited during attach");
    }
    t.stopped = true;
    int sig = WSTOPSIG(st);
    if (sig == SIGSTOP) {
      t.sigstop_expected = false;
    } else {
      make_pending(t, StopEvent{StopReason::Signal, pid_, tid, sig});
    }
    break;
  }
  return pt::set_options(tid, kAttachOptions);
}

Result<void> LinuxTarget::attach(Pid pid) {
  if (has_process()) {
    return base::make_error(base::Errc::invalid, "a process is already being debugged");
  }
  if (pid <= 0) {
    return attach_error(pid, ESRCH);
  }
  pid_ = pid;  // threads belong to it from here on
  if (auto res = attach_thread(pid); !res) {
    int err = res.error().sys_errno != 0 ? res.error().sys_errno : ESRCH;
    forget_process();
    return attach_error(pid, err);
  }
  // Threads may be created while we attach: repeat until a pass finds no new tid.
  std::set<Tid> failed;
  for (bool found = true; found;) {
    found = false;
    for (Tid tid : procfs::task_ids(pid)) {
      if (find(tid) != nullptr || failed.count(tid) != 0) {
        continue;
      }
      found = true;
      if (auto res = attach_thread(tid); !res) {
        failed.insert(tid);  // exited meanwhile, or already ours through a clone event
      }
    }
  }
  adopt(pid, true);
  base::logf(base::LogCat::ptrace, "attached to {} ({} threads)", pid, threads_.size());
  return base::success();
}

// Consumes a SIGSTOP we sent but never saw, so it is not delivered after detach. A real
// signal seen instead is kept in deliver.
void LinuxTarget::flush_sigstop(Thread& t, int& deliver) {
  for (int guard = 0; t.sigstop_expected && guard < 16; ++guard) {
    if (!pt::resume(t.tid, false, 0)) {
      return;
    }
    int st = 0;
    if (::waitpid(t.tid, &st, __WALL) != t.tid || !WIFSTOPPED(st)) {
      t.stopped = false;
      return;
    }
    int sig = WSTOPSIG(st);
    if (sig == SIGSTOP) {
      t.sigstop_expected = false;
    } else if (sig != SIGTRAP && (sig & 0x80) == 0 && deliver == 0) {
      deliver = sig;
    }
  }
}

Result<void> LinuxTarget::detach() {
  if (!has_process()) {
    return base::make_error(base::Errc::no_process, "no process");
  }
  if (running_) {
    stop_all();
    running_ = false;
  }
  for (const auto& [addr, site] : breakpoints_.sites()) {
    (void)memory_.write(addr, Bytes{site.original});
  }
  breakpoints_.clear();
  clear_debug_registers();
  const Pid pid = pid_;
  for (auto& [tid, t] : threads_) {
    if (!t.stopped) {
      continue;
    }
    int deliver = 0;
    if (t.pending && t.pending->reason == StopReason::Signal && t.pending->signal != SIGSTOP &&
        t.pending->signal != SIGTRAP) {
      deliver = t.pending->signal;
    }
    flush_sigstop(t, deliver);
    (void)pt::detach(tid, deliver);
  }
  base::logf(base::LogCat::ptrace, "detached from {}", pid);
  forget_process();
  return base::success();
}

Result<void> LinuxTarget::kill() {
  if (!has_process()) {
    return base::make_error(base::Errc::no_process, "no process");
  }
  const Pid pid = pid_;
  base::logf(base::LogCat::ptrace, "kill({}, SIGKILL)", pid);
  ::kill(pid, SIGKILL);
  // Reap every thread; the leader's status comes last.
  for (;;) {
    int st = 0;
    Tid w = ::waitpid(-1, &st, __WALL);
    if (w < 0) {
      if (errno == EINTR) {
        continue;
      }
      break;
    }
    if (w == pid && (WIFEXITED(st) || WIFSIGNALED(st))) {
      break;
    }
  }
  forget_process();
  exit_event_.reset();
  return base::success();
}

}  // namespace tracer
