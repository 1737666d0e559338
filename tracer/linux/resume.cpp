// Resuming as GDB asks (vCont plans), and stepping over the int3s GDB does not own (GDB steps
// over its own breakpoints itself, as with gdbserver). A step-over is its process's StepOver
// (step_over.hpp), moved on here: the other threads of the address space are held (paused if
// they run) while the original byte is in memory; the step's trap, like every other event,
// arrives through the event loop.
#include <algorithm>
#include <csignal>

#include "base/log.hpp"
#include "tracer/linux/code_view.hpp"
#include "tracer/linux/linux_target.hpp"
#include "tracer/linux/ptrace_calls.hpp"

namespace tracer {
namespace {

// Branches performed in a row before a thread runs (a loop of nothing but branches traps).
constexpr int kPerformedPerRun = 64;

const ThreadAction* action_for(const ResumePlan& plan, Pid pid, Tid tid) {
  for (const auto& a : plan.actions) {
    if (a.tid == tid) {
      return &a;
    }
  }
  if (plan.unannounced_threads.count(tid) != 0 || plan.unannounced_children.count(pid) != 0) {
    return nullptr;  // its news is on its way to GDB: a wildcard is not meant for it
  }
  for (const auto& a : plan.actions) {
    if (a.tid == kAllThreads && (a.pid == 0 || a.pid == pid)) {
      return &a;
    }
  }
  return nullptr;
}

}  // namespace

// Threads and processes that died while GDB had them stopped: resuming the thread (a thread's
// exit) or a thread of the process (its end) reports it, in the order they came.
void LinuxTarget::release_held_exits(const ResumePlan& plan) {
  auto resumes = [&](Pid pid, Tid tid) {
    const ThreadAction* a = action_for(plan, pid, tid);
    return a != nullptr && a->kind != ResumeKind::Stop;
  };
  pending_.release([&](const StopEvent& ev) {
    if (ev.reason == StopReason::ThreadExited) {
      return resumes(ev.pid, ev.tid);
    }
    Process* p = process(ev.pid);
    if (p == nullptr) {
      return true;  // (not kept: an end GDB is to hear of keeps its process)
    }
    return std::any_of(p->threads.begin(), p->threads.end(),
                       [&](const auto& entry) { return resumes(ev.pid, entry.first); });
  });
}

Result<void> LinuxTarget::resume(const ResumePlan& plan) {
  if (!has_process()) {
    return base::make_error(base::Errc::no_process, "no process");
  }
  if (all_stop() && all_stop_.running()) {
    return base::make_error(base::Errc::invalid, "already running");
  }
  release_held_exits(plan);
  if (all_stop() && pending_.has_exits()) {
    all_stop_.resumed();  // a process died while stopped: this resume reports its end
    events_.kick();
    return base::success();
  }
  bool any = false;
  bool report_waiting = false;
  for (auto& [pid, p] : processes_) {
    if (!p->known_to_gdb) {
      continue;
    }
    p->unannounced = false;  // GDB resumes: it has heard how the process stands
    for (auto& [tid, t] : p->threads) {
      const ThreadAction* a = action_for(plan, pid, tid);
      if (a == nullptr) {
        continue;
      }
      if (a->kind == ResumeKind::Stop) {
        // vCont;t (non-stop): a thread GDB believes running stops and says signal 0.
        if (!non_stop_ || !t.gdb.resumed()) {
          continue;
        }
        any = true;
        if (PendingEvents::has_stop(t)) {
          report_waiting = true;
        } else if (t.stopped() && !p->step_over.paused(tid)) {
          make_pending(t, StopEvent{StopReason::Signal, pid, tid, 0});
          report_waiting = true;
        } else {
          t.gdb.stop_to_say(0);
          request_stop(t);
        }
        continue;
      }
      if (t.gdb.resumed()) {
        continue;  // non-stop: running already as far as GDB knows
      }
      if (const StopEvent* stop = PendingEvents::stop_of(t);
          stop != nullptr && stop->reason == StopReason::SoftwareBreakpoint && !p->code.contains(t.stop_pc)) {
        pending_.drop_stop(t);  // GDB removed that breakpoint meanwhile: the thread just runs on
      }
      t.gdb.resumed_by(*a);
      report_waiting = report_waiting || PendingEvents::has_stop(t);
      any = true;
    }
  }
  if (!any) {
    if (non_stop_) {
      // The threads named are gone, their exits on the way (GDB stopping everything after one
      // process exited, say): nothing to do, as with gdbserver.
      return base::success();
    }
    return base::make_error(base::Errc::invalid, "no thread to resume");
  }
  if (all_stop()) {
    all_stop_.resumed();
    for (auto& [pid, p] : processes_) {
      refresh_read_watches(*p);
    }
  }
  if (report_waiting) {
    events_.kick();  // a stop not reported yet: in all-stop it ends this resume at once
    if (all_stop()) {
      return base::success();
    }
  }
  for (auto& [pid, p] : processes_) {
    proceed(*p);
  }
  return base::success();
}

// Runs every thread of p that GDB wants running and that is stopped with nothing to report;
// a thread GDB resumed on top of one of our int3s first steps over it.
void LinuxTarget::proceed(Process& p) {
  if (p.frozen || p.paused || (all_stop() && (all_stop_.stopping() || !all_stop_.running()))) {
    return;
  }
  if (p.step_over.active()) {
    try_begin_step_over(p);
    return;
  }
  for (auto& [tid, t] : p.threads) {
    if (t.gdb.resumed() && t.stopped() && !PendingEvents::has_stop(t) && t.run.started() &&
        !p.collector_edit_waiters.contains(tid)) {
      const int sig = t.gdb.take_resume_signal();  // delivered once
      if (auto res = run_thread(p, t, sig); !res) {
        base::logf(base::LogCat::ptrace, "resume {}: {}", tid, res.error().message());
      }
      if (p.step_over.active()) {
        return;  // it began a step-over: the others wait for its end
      }
    }
  }
}

namespace {

// A step that begins inside a syscall stop is first reported at the syscall's exit.
void note_step_start(LinuxThread& t, bool step) {
  t.step_from_syscall_stop.reset();
  if (step && t.in_syscall_stop) {
    if (auto pc = t.regs.pc(t.tid)) {
      t.step_from_syscall_stop = *pc;
    }
  }
  t.in_syscall_stop = false;
}

}  // namespace

Result<void> LinuxTarget::run_thread(Process& p, LinuxThread& t, int sig) {
  if (t.out_of_line_from != 0) {
    reenter_out_of_line(p, t);
  }
  if (resumed_on_tracepoint(p, t, sig)) {
    return base::success();
  }
  drop_stale_range_stops(p);
  sync_debug_registers(p, t);
  sig = t.gdb.runs_with(sig);
  t.run.runs_delivering(sig);
  const bool step = t.gdb.stepping();
  bool collector_step = false;
  // Branches are performed in the server while the thread stands on one (up to a budget, so
  // that `jmp .` cannot hold the server); then its collector may plant ahead or step it. Not
  // while it waits in vfork: the child runs in this memory, through the very code the thread
  // returns to (an int3 planted there would kill a child nobody traces); it plants again once
  // the child has exec'd or exited.
  for (int budget = kPerformedPerRun; p.collector && !t.in_vfork; --budget) {
    const SitePass pass = pass_collector_site(p, t, sig);
    if (pass == SitePass::Held) {
      return base::success();
    }
    if (pass == SitePass::Performed && budget > 0) {
      continue;
    }
    auto pc = t.regs.pc(t.tid);
    if (!pc || !p.collector->tracing(t.tid)) {
      break;
    }
    ProcessCodeView view(p);
    collector_step = p.collector->wants_step(t.tid, *pc, sig, step, view);
    if (collector_step || budget <= 0 || !collector_site(p, *pc)) {
      break;  // (the run it planned starts on a branch: performed above, without a trap)
    }
  }
  const bool to_syscall = runs_to_syscall(p, t, step, collector_step);
  const bool range_run = step && !collector_step && !to_syscall && run_to_range_stop(p, t, sig);
  // (A thread collecting a tracepoint's while-stepping steps, whatever GDB asked.)
  const bool single_step = (step && !range_run) || collector_step || t.while_stepping.has_value();
  note_step_start(t, !to_syscall && single_step);
  t.regs.forget();
  auto res = to_syscall ? kernel_.resume_to_syscall(t.tid, sig) : kernel_.resume(t.tid, single_step, sig);
  if (!res && range_run) {
    drop_range_stop(p, t);
  }
  if (res || res.error().code == base::Errc::no_thread) {
    // (no_thread: it died under us, SIGKILL from outside; its exit status is on the way)
    t.run.ran(step || t.while_stepping.has_value(), collector_step);
  }
  return res;
}

// A traced thread runs that stops often (each step, each branch): worth waiting for in poll().
bool LinuxTarget::collector_stepping() const {
  for (const auto& [pid, p] : processes_) {
    if (!p->collector) {
      continue;
    }
    for (const auto& [tid, t] : p->threads) {
      if (t.state() == ThreadState::Running && !p->step_over.stepping(tid) && t.gdb.resumed() &&
          (t.run.collector_step() || p->collector->tracing(tid))) {
        return true;
      }
    }
  }
  return false;
}

void LinuxTarget::start_step_over(Process& p, LinuxThread& t, Addr addr, int sig) {
  if (p.step_over.holds(t.tid)) {
    // Another thread's step-over is on (this one trapped before our SIGSTOP came): it waits,
    // back on the int3, and meets it again when it runs.
    if (sig != 0) {
      t.gdb.deliver_when_run(sig);
    }
    keep_going(p, t);
    return;
  }
  base::logf(base::LogCat::ptrace, "thread {}: stepping over int3 at {:#x}", t.tid, addr);
  p.step_over.start(t.tid, addr, sig);
  for (auto& [tid, o] : p.threads) {
    if (tid != t.tid && o.running()) {
      p.step_over.pause(tid);
      request_stop(o);
    }
  }
  try_begin_step_over(p);
}

// Starts the step once no other thread of the address space runs.
void LinuxTarget::try_begin_step_over(Process& p) {
  if (!p.step_over.pausing()) {
    return;
  }
  LinuxThread* t = p.find(p.step_over.thread());
  if (t == nullptr || !t->stopped()) {
    p.step_over.abandon();
    return;
  }
  for (auto& [tid, o] : p.threads) {
    if (tid != t->tid && o.run.started() && !o.settled(p.step_over)) {
      return;  // its SIGSTOP is on the way
    }
  }
  const Addr addr = p.step_over.addr();
  if (!p.code.lift(addr)) {
    p.step_over.abandon();
    proceed(p);
    return;
  }
  sync_debug_registers(p, *t);
  const int sig = p.step_over.began();
  t->out_of_line_from = 0;  // (its instruction runs in place now)
  if (p.collector && p.collector->tracing(t->tid)) {
    ProcessCodeView view(p);
    (void)p.collector->wants_step(t->tid, addr, sig, true, view);  // the step is ours, its branch theirs
  }
  note_step_start(*t, true);
  t->regs.forget();
  if (auto res = kernel_.resume(t->tid, true, sig); !res && res.error().code != base::Errc::no_thread) {
    base::logf(base::LogCat::ptrace, "step-over {}: {}", t->tid, res.error().message());
    end_step_over(p);
    return;
  }
  t->run.ran(true, false);
}

// The step-over is over, however it ended: the int3 goes back (if an owner still wants it) and
// the threads paused for it are free to run again (the caller's proceed lets them go).
void LinuxTarget::end_step_over(Process& p) {
  if (p.step_over.finish().lifted) {
    p.code.reinstate();
  }
}

}  // namespace tracer
