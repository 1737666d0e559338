// Attaching to a running process (every thread), detaching from it, and killing it.
#include <sys/ptrace.h>
#include <sys/wait.h>

#include <chrono>
#include <csignal>
#include <cstring>
#include <set>
#include <utility>

#include "base/log.hpp"
#include "tracer/linux/linux_target.hpp"
#include "tracer/linux/procfs.hpp"
#include "tracer/linux/ptrace_calls.hpp"

namespace tracer {
namespace {

// No EXITKILL: an attached process must survive the server.
constexpr long kAttachOptions = PTRACE_O_TRACECLONE | PTRACE_O_TRACEEXEC | PTRACE_O_TRACESYSGOOD |
                                PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK | PTRACE_O_TRACEVFORKDONE;

// gdbserver's words: "Cannot attach to process 42: Operation not permitted (1), process 42 is
// already traced by process 7".
base::Error attach_error(Pid pid, int err) {
  std::string text = "Cannot attach to process " + std::to_string(pid) + ": " + std::strerror(err) + " (" +
                     std::to_string(err) + ")";
  if (err == EPERM) {
    if (const Pid tracer = procfs::tracer_pid(pid); tracer != 0) {
      text += ", process " + std::to_string(pid) + " is already traced by process " + std::to_string(tracer);
    }
  }
  return base::Error{err == ESRCH ? base::Errc::no_process : base::Errc::invalid, 0, std::move(text)};
}

}  // namespace

// PTRACE_ATTACH one thread and wait for its SIGSTOP. A different signal arriving first
// becomes that thread's pending event; the SIGSTOP then stays expected.
Result<void> LinuxTarget::attach_thread(Process& p, Tid tid) {
  if (auto res = kernel_.attach(tid); !res) {
    return res;
  }
  LinuxThread& t = p.add_thread(tid);
  t.run.attaching();
  auto waited = kernel_.wait_for(tid);
  if (!waited) {
    p.threads.erase(tid);
    return std::move(waited).error();
  }
  const int st = *waited;
  if (WIFEXITED(st) || WIFSIGNALED(st)) {
    p.threads.erase(tid);
    return base::make_error(base::Errc::no_thread, "thread exited during attach");
  }
  (void)t.run.saw_stop();
  t.regs.forget();
  t.stop_pc = t.regs.pc(tid).value_or(0);
  const int sig = WSTOPSIG(st);
  if (!t.run.took_our_sigstop(sig)) {
    make_pending(t, StopEvent{StopReason::Signal, p.pid, tid, sig});
  }
  return kernel_.set_options(tid, kAttachOptions);
}

Result<void> LinuxTarget::attach(Pid pid) {
  if (process(pid) != nullptr) {
    return base::make_error(base::Errc::invalid, "process " + std::to_string(pid) + " is already being debugged");
  }
  if (pid <= 0) {
    return attach_error(pid, ESRCH);
  }
  Process& p = add_process(pid, ProcessOrigin::Attached);
  if (auto res = attach_thread(p, pid); !res) {
    int err = res.error().sys_errno != 0 ? res.error().sys_errno : ESRCH;
    forget_process(pid);
    return attach_error(pid, err);
  }
  // Threads may be created while we attach: repeat until a pass finds no new tid.
  std::set<Tid> failed;
  for (bool found = true; found;) {
    found = false;
    for (Tid tid : kernel_.task_ids(pid)) {
      if (p.find(tid) != nullptr || failed.count(tid) != 0) {
        continue;
      }
      found = true;
      if (auto res = attach_thread(p, tid); !res) {
        failed.insert(tid);  // exited meanwhile, or already ours through a clone event
      }
    }
  }
  current_ = pid;
  base::logf(base::LogCat::ptrace, "attached to {} ({} threads)", pid, p.threads.size());
  if (non_stop_) {
    // Non-stop: GDB sees the threads running after vAttach (and stops them with vCont;t
    // unless it was `attach&`), as with gdbserver. A signal caught while attaching is
    // reported at once.
    for (auto& [tid, t] : p.threads) {
      t.gdb.runs_on(ThreadAction{tid, pid, ResumeKind::Continue});
    }
    proceed(p);
    events_.kick();
  } else {
    p.unannounced = true;
  }
  return base::success();
}

void LinuxTarget::run_unannounced(Tid reported) {
  Process* p = locate(reported).process;
  if (p == nullptr || !std::exchange(p->unannounced, false) || !non_stop_) {
    return;
  }
  for (auto& [tid, t] : p->threads) {
    if (tid != reported && !t.gdb.resumed()) {
      t.gdb.runs_on(ThreadAction{tid, p->pid, ResumeKind::Continue});
    }
  }
  proceed(*p);
  events_.kick();
}

std::optional<StopEvent> LinuxTarget::take_attach_signal(Pid pid) {
  Process* p = process(pid);
  if (p == nullptr || non_stop_) {
    return std::nullopt;
  }
  LinuxThread* first = PendingEvents::next_stop(
      [&](auto&& visit) {
        for (auto& [tid, t] : p->threads) {
          visit(t);
        }
      },
      attach_signal_rank);
  if (first == nullptr) {
    return std::nullopt;
  }
  first->gdb.stop_reported(PendingEvents::stop_of(*first)->signal);
  return pending_.take_stop(*first);
}

// Consumes a SIGSTOP we sent but never saw, so it is not delivered after detach. A real
// signal seen instead is kept in deliver.
void LinuxTarget::flush_sigstop(LinuxThread& t, int& deliver) {
  for (int guard = 0; t.run.sigstop_expected() && guard < 16; ++guard) {
    t.regs.forget();
    if (!kernel_.resume(t.tid, false, 0)) {
      return;
    }
    auto st = kernel_.wait_for(t.tid);
    if (!st || !WIFSTOPPED(*st)) {
      t.run.let_go();
      return;
    }
    const int sig = WSTOPSIG(*st);
    if (t.run.took_our_sigstop(sig)) {
    } else if (sig != SIGTRAP && (sig & 0x80) == 0 && deliver == 0) {
      deliver = sig;
    }
  }
}

bool LinuxTarget::program_gets(int sig) const {
  if (sig == 0 || sig == SIGSTOP) {
    return false;
  }
  if (program_signals_) {
    return program_signals_->count(sig) != 0;
  }
  return sig != SIGTRAP && sig != SIGINT;
}

// Our int3s and debug registers out, every thread let go (with the signal it stopped with,
// if GDB never saw it).
Result<void> LinuxTarget::detach_one(Process& p) {
  const Pid pid = p.pid;
  stop_now(&p);
  Process* still = process(pid);
  if (still == nullptr || still->ended) {
    // Dead already, or it exited meanwhile: nothing left to detach from, nothing to report.
    if (still != nullptr) {
      forget_process(pid);
    }
    pending_.drop_process(pid);
    return base::success();
  }
  end_step_over(*still);
  // Fork children GDB has not heard of (their fork event still pending) go with their parent.
  for (Pid child : unreported_fork_children(pid)) {
    release_fork_child(*process(child));
  }
  still = process(pid);
  // A vfork child shares its parent's memory: the int3s there are the parent's too. And a
  // vfork parent let go while its child runs keeps the int3s the child still wants.
  const Process* sharer = nullptr;
  for (const auto& [other, q] : processes_) {
    if (q->vfork_parent == pid) {
      sharer = q.get();
    }
  }
  if (still->vfork_parent == 0 || process(still->vfork_parent) == nullptr) {
    still->code.remove_all(sharer != nullptr ? &sharer->code : nullptr);
  } else {
    still->code.forget_all();  // the parent's int3s, in the parent's memory
  }
  clear_debug_registers(*still);
  release_collector(*still);
  for (auto& [tid, t] : still->threads) {
    if (!t.stopped()) {
      continue;
    }
    int deliver = 0;
    if (const StopEvent* stop = PendingEvents::stop_of(t); stop != nullptr && stop->reason == StopReason::Signal &&
        stop->signal != SIGSTOP && stop->signal != SIGTRAP && stop->signal != 0) {
      deliver = stop->signal;
    }
    if (deliver == 0 && program_gets(t.gdb.reported_signal())) {
      deliver = t.gdb.reported_signal();  // GDB heard of it and lets the program have it
    }
    flush_sigstop(t, deliver);
    (void)kernel_.detach(tid, deliver);
  }
  base::logf(base::LogCat::ptrace, "detached from {}", pid);
  forget_process(pid);
  pending_.drop_process(pid);  // exits of its threads GDB had not heard yet
  if (processes_.empty()) {
    all_stop_.reset();  // nothing left to report on
  }
  return base::success();
}

Result<void> LinuxTarget::detach() {
  Process* p = current();
  if (p == nullptr) {
    return base::make_error(base::Errc::no_process, "no process");
  }
  return detach_one(*p);
}

std::vector<Pid> LinuxTarget::unreported_fork_children(Pid pid) const {
  std::vector<Pid> out;
  for (const auto& [other, q] : processes_) {
    if (q->forked_by == pid && !q->known_to_gdb) {
      out.push_back(other);
    }
  }
  return out;
}

Result<void> LinuxTarget::detach_process(Pid pid) {
  Process* p = process(pid);
  if (p == nullptr) {
    return base::make_error(base::Errc::no_process, "no such process " + std::to_string(pid));
  }
  return detach_one(*p);
}

Result<void> LinuxTarget::kill_process(Pid pid) {
  Process* p = process(pid);
  if (p == nullptr) {
    return base::make_error(base::Errc::no_process, "no such process " + std::to_string(pid));
  }
  for (Pid child : unreported_fork_children(pid)) {
    (void)kill_process(child);  // GDB never heard of it: it goes with its parent
  }
  p = process(pid);
  if (p == nullptr) {
    return base::success();
  }
  base::logf(base::LogCat::ptrace, "kill({}, SIGKILL)", pid);
  p->frozen = true;
  if (!p->ended) {  // else dead and reaped already
    ::kill(pid, SIGKILL);
  }
  // Reap: the leader's status comes last. Other processes' events are handled meanwhile.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (process(pid) != nullptr && !process(pid)->ended && std::chrono::steady_clock::now() < deadline) {
    events_.wait_readable(std::chrono::milliseconds(50));
    handle_batch(events_.drain());
  }
  if (process(pid) != nullptr) {
    forget_process(pid);
  }
  pending_.drop_process(pid);  // GDB asked for it: no exit report follows
  if (processes_.empty() && !pending_.has_exits()) {
    all_stop_.reset();  // nothing left to report on
  }
  return base::success();
}

Result<void> LinuxTarget::kill() {
  if (!has_process()) {
    return base::make_error(base::Errc::no_process, "no process");
  }
  kill_all(false);
  return base::success();
}

// Every process dies (GDB's kill); when the server goes away, processes it attached to (and
// their children) are let go clean instead.
void LinuxTarget::kill_all(bool spare_attached) {
  while (!processes_.empty()) {
    Process& p = *processes_.begin()->second;
    if (spare_attached && p.attached) {
      (void)detach_one(p);
    } else {
      (void)kill_process(p.pid);
    }
  }
  pending_.clear();
  early_stops_.clear();
}

}  // namespace tracer
