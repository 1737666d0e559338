// What to report and when. The core is non-stop; the policy decides:
//   non-stop  each thread's stop is reported as soon as it happens, the others run on;
//   all-stop  the first event stops every thread of every process (SIGSTOP, asynchronously:
//             the event loop keeps running meanwhile), then the oldest event is reported and
//             the others stay pending for the next resume.
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <utility>
#include <csignal>
#include <vector>

#include "base/log.hpp"
#include "tracer/linux/linux_target.hpp"
#include "tracer/linux/procfs.hpp"
#include "tracer/linux/ptrace_calls.hpp"

namespace tracer {
namespace {

// Waiting for a synchronous stop (detach, kill, shutdown) gives up after this long.
constexpr auto kSyncStopLimit = std::chrono::seconds(5);

}  // namespace

std::optional<StopEvent> LinuxTarget::poll() {
  // Single-stepping collectors stop once per instruction: stay here for a moment while their
  // steps come, rather than going back to the server's loop for each one.
  const auto budget_end = std::chrono::steady_clock::now() + std::chrono::milliseconds(25);
  handle_batch(events_.drain());
  collector_edits_due();
  // A leader that exits before its threads sends SIGCHLD but no wait status: look for one at
  // each wake-up, as gdbserver does (not at each collector step below).
  for (auto& [pid, p] : processes_) {
    notice_zombie_leader(*p);
  }
  std::optional<EventSource::Window> window;
  for (;;) {
    if (auto ev = next_report()) {
      return ev;
    }
    if (!collector_stepping() || all_stop_.interrupt_requested() || std::chrono::steady_clock::now() >= budget_end) {
      return std::nullopt;
    }
    if (!window) {
      window.emplace(events_, std::chrono::milliseconds(5));
    }
    if (auto status = events_.wait_one()) {
      handle_batch({*status});
      collector_edits_due();
    }
  }
}

bool LinuxTarget::running() const {
  if (all_stop()) {
    return all_stop_.running();
  }
  for (const auto& [pid, p] : processes_) {
    for (const auto& [tid, t] : p->threads) {
      if (t.gdb.resumed()) {
        return true;
      }
    }
  }
  return false;
}

Result<void> LinuxTarget::interrupt() {
  if (!has_process()) {
    return base::make_error(base::Errc::no_process, "no process");
  }
  if (all_stop()) {
    if (all_stop_.interrupted()) {
      events_.kick();  // poll() stops every thread and reports SIGINT
    }
    return base::success();
  }
  // Non-stop (vCtrlC): one running thread of the current process stops and says SIGINT.
  Process* p = current() != nullptr ? current() : processes_.begin()->second.get();
  LinuxThread* pick = p->find(p->pid);
  if (pick == nullptr || !pick->gdb.resumed() || PendingEvents::has_stop(*pick)) {
    pick = nullptr;
    for (auto& [tid, t] : p->threads) {
      if (t.gdb.resumed() && !PendingEvents::has_stop(t)) {
        pick = &t;
        break;
      }
    }
  }
  if (pick != nullptr) {
    if (pick->stopped()) {
      make_pending(*pick, StopEvent{StopReason::Signal, p->pid, pick->tid, SIGINT});
      events_.kick();
    } else {
      pick->gdb.stop_to_say(SIGINT);
      request_stop(*pick);
    }
  }
  return base::success();
}

void LinuxTarget::request_stop(LinuxThread& t) {
  if (t.run.may_request_stop() && kernel_.tgkill(t.pid, t.tid, SIGSTOP)) {
    t.run.stop_requested();
  }
}

// True once no thread runs on its own. A thread that never stops again (a leader that
// exited before its threads: a zombie) is found here and set aside.
bool LinuxTarget::settle() {
  std::vector<LinuxThread*> waiting;
  for (auto& [pid, p] : processes_) {
    for (auto& [tid, t] : p->threads) {
      if (!t.settled(p->step_over) && (t.run.started() || p->known_to_gdb)) {
        waiting.push_back(&t);
      }
    }
  }
  // /proc is asked only once few threads are left to stop: a thousand SIGSTOPs arrive in
  // batches, and reading a thousand stat files per batch would make stopping quadratic.
  constexpr std::size_t kZombieCheckBelow = 8;
  if (waiting.empty() || waiting.size() > kZombieCheckBelow) {
    return waiting.empty();
  }
  bool all = true;
  for (LinuxThread* t : waiting) {
    if (t->run.started() && t->run.sigstop_expected()) {
      if (gone(t->pid, t->tid)) {
        if (Process* p = process(t->pid); p != nullptr && t->tid == p->pid) {
          leader_became_zombie(*p, *t);
        } else {
          t->run.became_zombie();  // its exit is on its way
        }
        continue;
      }
    }
    all = false;
  }
  return all;
}

void LinuxTarget::notice_zombie_leader(Process& p) {
  LinuxThread* leader = p.find(p.pid);
  if (leader == nullptr || !leader->running() || p.threads.size() < 2) {
    return;
  }
  if (gone(p.pid, p.pid)) {
    base::logf(base::LogCat::ptrace, "leader {} is a zombie: it leaves the thread list", p.pid);
    leader_became_zombie(p, *leader);
  }
}

bool LinuxTarget::any_resumed() const {
  for (const auto& [pid, p] : processes_) {
    for (const auto& [tid, t] : p->threads) {
      if (t.gdb.resumed() && t.state() != ThreadState::Zombie) {
        return true;
      }
    }
  }
  return false;
}

std::optional<StopEvent> LinuxTarget::next_report() {
  return all_stop() ? all_stop_report() : non_stop_report();
}

// The event GDB hears about: a fork child becomes known, the reported thread GDB's.
StopEvent LinuxTarget::reported(StopEvent ev) {
  if ((ev.reason == StopReason::Fork || ev.reason == StopReason::VFork) && ev.child_pid != 0) {
    if (Process* c = process(ev.child_pid)) {
      c->known_to_gdb = true;
    }
  }
  if (ev.reason != StopReason::Exited && ev.reason != StopReason::Killed &&
      ev.reason != StopReason::ThreadExited && ev.reason != StopReason::NoResumed && process(ev.pid) != nullptr) {
    current_ = ev.pid;
    // Read every register now, as gdbserver does for its stop reply: GDB's `g` is then
    // answered even if the thread is killed from outside before GDB asks.
    if (LinuxThread* t = process(ev.pid)->find(ev.tid); t != nullptr && t->stopped()) {
      (void)t->regs.all(t->tid);
      t->gdb.stop_reported(ev.reason == StopReason::Signal ? ev.signal : 0);
    }
  }
  if ((ev.reason == StopReason::Exited || ev.reason == StopReason::Killed) && process(ev.pid) != nullptr &&
      process(ev.pid)->ended) {
    forget_process(ev.pid);  // GDB has heard of its end
    pending_.drop_process(ev.pid);  // (exits of its threads GDB never resumed)
  }
  base::logf(base::LogCat::ptrace, "report: {}.{} reason {} signal {}", ev.pid, ev.tid,
             static_cast<int>(ev.reason), ev.signal);
  return ev;
}

// All-stop reports one event and keeps the rest pending (pending_events.hpp says which first).
PendingEvents::Next LinuxTarget::all_stop_next() {
  return pending_.next([this](auto&& visit) { for_each_thread(visit); }, all_stop_rank,
                       PendingEvents::ExitOrder::ByAge);
}

std::optional<StopEvent> LinuxTarget::all_stop_report() {
  if (!all_stop_.running()) {
    return std::nullopt;
  }
  // The event of a thread this resume let run, and the processes gone.
  if (!all_stop_next() && !all_stop_.interrupt_requested()) {
    if (report_no_resumed_ && !processes_.empty() && !any_resumed()) {
      all_stop_.nothing_resumed();  // the threads GDB let run are all gone (scheduler locking)
      const Pid pid = current() != nullptr ? current_ : processes_.begin()->first;
      return reported(StopEvent{StopReason::NoResumed, pid, 0, 0});
    }
    return std::nullopt;
  }
  if (all_stop_.begin_stopping()) {
    for (auto& [pid, p] : processes_) {
      for (auto& [tid, t] : p->threads) {
        request_stop(t);
      }
    }
  }
  if (!settle()) {
    return std::nullopt;  // the SIGSTOPs are on their way
  }
  all_stop_.settled();
  // Nothing of the resume goes on: step-overs that waited for other threads are dropped.
  for (auto& [pid, p] : processes_) {
    if (p->step_over.pausing()) {
      p->step_over.abandon();
    }
  }
  // Re-pick: stopping may have produced other events.
  const PendingEvents::Next next = all_stop_next();
  const bool stop_waiting =
      next.stop != nullptr ||
      PendingEvents::next_stop([this](auto&& visit) { for_each_thread(visit); }, all_stop_rank) != nullptr;
  StopEvent ev;
  if (next) {
    ev = pending_.take(next);
    if (ev.reason == StopReason::SingleStep && all_stop_.take_interrupt()) {
      // ^C while GDB single-steps (software watchpoints, `next` through code): the step is
      // done, and GDB hears of the interrupt, as a SIGINT to the program would tell it.
      ev = StopEvent{StopReason::Signal, ev.pid, ev.tid, SIGINT};
    }
  } else if (processes_.empty()) {
    all_stop_.reset();
    return std::nullopt;
  } else {
    // interrupt(): report the stop as SIGINT, like a ^C at a terminal, for a thread this
    // resume let run (GDB stepping one thread over a breakpoint expects news of that one only).
    Process* p = current() != nullptr ? current() : processes_.begin()->second.get();
    auto may_report = [](const LinuxThread* x) {
      return x != nullptr && x->gdb.resumed() && x->state() != ThreadState::Zombie;
    };
    LinuxThread* t = p->find(p->pid);
    for (auto it = p->threads.begin(); !may_report(t) && it != p->threads.end(); ++it) {
      t = &it->second;
    }
    if (!may_report(t)) {
      t = p->any_stopped();
    }
    ev = StopEvent{StopReason::Signal, p->pid, t != nullptr ? t->tid : p->pid, SIGINT};
  }
  // A signal GDB may pass on silently (`handle SIGUSR1 nostop`) leaves the ^C waiting: GDB
  // resumes at once and the next stop is the SIGINT, as the real one gdbserver sends would be.
  const bool interrupt_stays = ev.reason == StopReason::Signal ? ev.signal != SIGINT : stop_waiting;
  all_stop_.reported(interrupt_stays);
  for (auto& [pid, p] : processes_) {
    for (auto& [tid, t] : p->threads) {
      t.gdb.resume_ended();
    }
  }
  return reported(ev);
}

std::optional<StopEvent> LinuxTarget::non_stop_report() {
  const auto next = pending_.next([this](auto&& visit) { for_each_thread(visit); }, non_stop_rank,
                                  PendingEvents::ExitOrder::AfterStops);
  if (!next) {
    return std::nullopt;
  }
  if (next.stop != nullptr) {
    next.stop->gdb.no_longer_resumed();
  }
  return reported(pending_.take(next));
}

// Synchronous: every thread of p (all processes when null) stopped before returning. Used
// where GDB is not waiting for a stop reply (detach, kill, the server going away).
void LinuxTarget::stop_now(Process* only) {
  auto targets = [&](auto&& fn) {
    for (auto& [pid, p] : processes_) {
      if (only == nullptr || p.get() == only) {
        fn(*p);
      }
    }
  };
  targets([&](Process& p) {
    p.frozen = true;
    for (auto& [tid, t] : p.threads) {
      request_stop(t);
    }
  });
  const auto deadline = std::chrono::steady_clock::now() + kSyncStopLimit;
  const Pid pid = only != nullptr ? only->pid : 0;
  for (;;) {
    bool all = true;
    if (pid != 0 && process(pid) == nullptr) {
      return;  // it exited meanwhile
    }
    targets([&](Process& p) {
      for (auto& [tid, t] : p.threads) {
        if (!t.settled(p.step_over)) {
          if (gone(p.pid, tid)) {
            t.run.became_zombie();
          } else {
            request_stop(t);
            all = false;
          }
        }
      }
    });
    if (all || std::chrono::steady_clock::now() >= deadline) {
      return;
    }
    events_.wait_readable(std::chrono::milliseconds(50));
    handle_batch(events_.drain());
  }
}

bool LinuxTarget::runs_any(const Process& p, const std::function<bool(Tid)>& which) const {
  return std::any_of(p.threads.begin(), p.threads.end(), [&](const auto& entry) {
    return entry.second.run.running() && entry.second.run.started() && which(entry.first);
  });
}

bool LinuxTarget::with_threads_paused(Process& p, const std::function<bool(Tid)>& which,
                                      const std::function<void()>& work) {
  auto running = [&] {
    std::vector<LinuxThread*> out;
    for (auto& [tid, t] : p.threads) {
      if (t.run.running() && t.run.started() && which(tid)) {
        out.push_back(&t);
      }
    }
    return out;
  };
  if (!runs_any(p, which)) {
    work();
    return true;
  }
  const Pid pid = p.pid;
  p.paused = true;
  const auto deadline = std::chrono::steady_clock::now() + kSyncStopLimit;
  for (std::vector<LinuxThread*> left = running(); !left.empty(); left = running()) {
    for (LinuxThread* t : left) {
      if (gone(pid, t->tid)) {
        t->run.became_zombie();  // (a leader that exited before its threads: it never stops)
      } else {
        request_stop(*t);  // (once: ours, taken without a report)
      }
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      base::logf(base::LogCat::ptrace, "process {}: {} thread(s) did not stop for a pause", pid, left.size());
      break;
    }
    events_.wait_readable(std::chrono::milliseconds(50));
    handle_batch(events_.drain());
    if (process(pid) == nullptr) {
      return false;  // it ended meanwhile
    }
  }
  work();
  p.paused = false;
  proceed(p);
  return true;
}

}  // namespace tracer

namespace tracer {

// QNonStop: only while every thread is stopped (GDB sends it at connect and on `set non-stop`).
Result<void> LinuxTarget::set_non_stop(bool on) {
  if (on == non_stop_) {
    return base::success();
  }
  if (running()) {
    return base::make_error(base::Errc::invalid, "cannot change non-stop mode while threads run");
  }
  non_stop_ = on;
  all_stop_.reset();
  return base::success();
}

}  // namespace tracer
