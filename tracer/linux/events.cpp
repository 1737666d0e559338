// One wait status into the state of the thread it belongs to: exits, our own SIGSTOPs,
// ptrace events, traps (breakpoints, steps, watchpoints, collector steps) and signals. A stop
// worth reporting becomes the thread's pending event; anything else lets the thread go on.
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>

#include <utility>

#include "base/log.hpp"
#include "tracer/linux/code_view.hpp"
#include "tracer/linux/linux_target.hpp"
#include "tracer/linux/procfs.hpp"
#include "tracer/linux/ptrace_calls.hpp"

namespace tracer {
namespace {

// A trap from an int3 (SI_KERNEL) whose byte is no longer before pc: an int3 of ours, taken
// out after the thread ran it and before its trap was seen (GDB's z0 in non-stop, a collector
// letting go). A program's own int3 is still in memory; its `int $3` (CD 03) leaves 03 there.
bool ran_removed_int3(const CodeMemory& code, Addr pc) {
  auto bytes = code.read(pc - 2, 2);
  if (!bytes || bytes->size() != 2) {
    return false;
  }
  const std::uint8_t before = (*bytes)[1];
  return before != 0xcc && !((*bytes)[0] == 0xcd && before == 0x03);
}

}  // namespace

const char* to_string(ThreadState s) {
  switch (s) {
    case ThreadState::Running: return "running";
    case ThreadState::StopRequested: return "stop requested";
    case ThreadState::Stopped: return "stopped";
    case ThreadState::Zombie: return "zombie";
  }
  return "?";
}

// The first stops of threads and children not known yet are set aside before anything else:
// the event that announces them (clone, fork) may come later in the same batch.
void LinuxTarget::handle_batch(const std::vector<WaitStatus>& batch) {
  std::vector<bool> early(batch.size(), false);
  for (std::size_t i = 0; i < batch.size(); ++i) {
    const WaitStatus& w = batch[i];
    if (WIFSTOPPED(w.status) && locate(w.tid).thread == nullptr && early_stops_.count(w.tid) == 0) {
      early_stops_[w.tid] = w.status;
      early[i] = true;
    }
  }
  for (std::size_t i = 0; i < batch.size(); ++i) {
    if (!early[i]) {
      handle_status(batch[i].tid, batch[i].status);
    }
  }
}

void LinuxTarget::handle_status(Tid tid, int status) {
  Located at = locate(tid);
  if (at.thread == nullptr) {
    if (WIFSTOPPED(status)) {
      // A new thread or fork child whose first stop came before its parent's event.
      early_stops_[tid] = status;
    }
    return;  // the exit of a thread or process we no longer know
  }
  Process& p = *at.process;
  LinuxThread& t = *at.thread;
  if (WIFEXITED(status) || WIFSIGNALED(status)) {
    handle_exit(p, tid, status);
    return;
  }
  const ThreadRun::Seen seen = t.run.saw_stop();
  const bool was_stepping_over = p.step_over.stepping(tid);
  t.regs.forget();
  // Not at a ptrace event: the thread is inside its system call there (an inferior call would
  // leave the call's result out of rax); it goes on in the cache, or GDB hears of it there.
  StopMeaning meaning = StopMeaning::Program;
  if (p.collector && p.collector->tracing(tid) && WSTOPSIG(status) != (SIGTRAP | 0x80) && (status >> 16) == 0) {
    ProcessCodeView view(p);
    meaning = p.collector->thread_stopped(tid, view);  // (back from the collector's own code to the program's)
    t.regs.forget();
  }
  if (auto pc = t.regs.pc(tid)) {
    t.stop_pc = *pc;
    leave_out_of_line(p, t);
  }
  if (t.collected_at != t.stop_pc) {
    t.collected_at = 0;  // it left the tracepoint it collected at (a step-over cut short stays)
  }
  const int sig = WSTOPSIG(status);
  const int event = status >> 16;
  t.run.stopped_with(event == 0 && sig != (SIGTRAP | 0x80) ? sig : 0);
  if (meaning == StopMeaning::OwnEdit && sig == SIGTRAP && event == 0) {
    // The collector's own trap: no one hears of it. The thread waits, stopped, until the
    // collector's code is made afresh with its other threads paused (collector_edits_due).
    p.collector_edit_waiters.insert(tid);
    return;
  }
  if (sig == SIGTRAP && event == 0 && step_on_past_syscall_exit(t)) {
    t.run.stop_undone(seen);
    return;
  }
  if (seen.first) {
    if (sig == SIGSTOP) {
      thread_started(p, t);
      return;
    }
  }
  if (was_stepping_over) {
    step_over_stopped(p, t, sig, event);
    return;
  }
  if (sig == SIGTRAP && event != 0) {
    handle_ptrace_event(p, t, event);
    return;
  }
  if (sig == (SIGTRAP | 0x80)) {
    syscall_stopped(p, t);
    return;
  }
  handle_signal(p, t, sig);
}

void LinuxTarget::handle_exit(Process& p, Tid tid, int status) {
  if (tid == p.pid && p.ended) {
    // The same death waited for a second time. A traced process whose parent is not its tracer
    // is reaped by the tracer first (wait_task_zombie's EXIT_TRACE); its zombie then goes to
    // its parent, and when that parent has died meanwhile (a process group killed at once), to
    // the reaper of its orphans: us, when we are the tree's (triage). Its pid stays taken
    // until that second wait, so no other process can be behind this status.
    base::logf(base::LogCat::ptrace, "process {}: its end seen again (as the reaper of an orphan)", p.pid);
    return;
  }
  // A thread that dies stepping over an int3 (or waiting to) ends its step-over: the int3 goes
  // back, and the threads paused for it go on.
  const bool stepped_over = p.step_over.of(tid);
  if (stepped_over) {
    end_step_over(p);
  }
  p.step_over.unpause(tid);
  if (p.collector) {
    ProcessCodeView view(p);
    p.collector->thread_ended(tid, view);  // (what it recorded since its last stop)
    p.collector->thread_exited(tid);
  }
  if (tid != p.pid) {
    log_event("thread_exit", p.pid, tid, {}, WIFEXITED(status) ? WEXITSTATUS(status) : 0);
    const LinuxThread* gone = p.find(tid);
    const bool resumed = gone == nullptr || gone->gdb.resumed();
    const bool report = gone != nullptr ? reports_exit_of(*gone) : report_thread_exits_;
    p.threads.erase(tid);  // one thread gone, its process lives on
    if (report) {
      tell_thread_exit(p, tid, WIFEXITED(status) ? WEXITSTATUS(status) : 0, resumed);
    }
    if (stepped_over) {
      proceed(p);
    } else {
      try_begin_step_over(p);  // it may have been waiting for this thread to stop
    }
    return;
  }
  StopEvent ev;
  ev.pid = p.pid;
  ev.tid = tid;
  if (WIFEXITED(status)) {
    ev.reason = StopReason::Exited;
    ev.status = WEXITSTATUS(status);
  } else {
    ev.reason = StopReason::Killed;
    ev.signal = WTERMSIG(status);
  }
  base::logf(base::LogCat::ptrace, "process {} {} {}", p.pid,
             ev.reason == StopReason::Exited ? "exited with status" : "killed by signal",
             ev.reason == StopReason::Exited ? ev.status : ev.signal);
  const bool tell_gdb = p.known_to_gdb;
  if (tell_gdb && !p.frozen && p.vfork_parent == 0) {
    // GDB still sees the process until it hears of its end (as with gdbserver, which keeps it
    // until it is mourned): its threads stay listed, their registers readable.
    p.ended = true;
    p.frozen = true;
    if (LinuxThread* leader = p.find(tid)) {
      leader->run.ended();
    }
    // Told like any other event if GDB had it running; else (killed from outside while GDB had
    // it stopped) once GDB resumes it.
    pending_.add_exit(ev, p.any_resumed() ? PendingEvents::When::Now : PendingEvents::When::AtResume);
    return;
  }
  // A vfork child that exits gives its parent back its memory, with the int3s GDB planted
  // through it: the parent reports vforkdone.
  hand_back_vfork_memory(p);
  forget_process(p.pid);
  if (tell_gdb) {
    pending_.add_exit(ev);
  }
}

// GDB hears of a thread's end (`w`); in all-stop, of one it had stopped only once it resumes it.
void LinuxTarget::tell_thread_exit(Process& p, Tid tid, int status, bool resumed) {
  if (!p.known_to_gdb) {
    return;
  }
  StopEvent ev{StopReason::ThreadExited, p.pid, tid, 0};
  ev.status = status;
  pending_.add_exit(ev, all_stop() && !resumed ? PendingEvents::When::AtResume : PendingEvents::When::Now);
}

// The leader exited before its threads (pthread_exit, or the whole process is on its way out):
// a zombie until the last one is gone, it never stops again. GDB that asked to hear of its exit
// hears of it now, as from gdbserver (`w0`: its status is the process's, known only at the end),
// if another thread lives on: a leader seen gone as its last thread leaves is the process
// exiting, and GDB hears `W` for it.
void LinuxTarget::leader_became_zombie(Process& p, LinuxThread& leader) {
  leader.run.became_zombie();
  const bool others_live = std::any_of(p.threads.begin(), p.threads.end(), [&](const auto& entry) {
    return entry.first != leader.tid && !gone(p.pid, entry.first);
  });
  if (others_live && reports_exit_of(leader)) {
    tell_thread_exit(p, leader.tid, 0, leader.gdb.resumed());
  }
}

void LinuxTarget::handle_signal(Process& p, LinuxThread& t, int sig) {
  if (t.run.took_our_sigstop(sig)) {
    if (auto says = t.gdb.take_stop_saying()) {
      if (!PendingEvents::has_stop(t)) {
        make_pending(t, StopEvent{StopReason::Signal, p.pid, t.tid, *says});
      }
      return;
    }
    keep_going(p, t);
    return;
  }
  // (A SIGTRAP's siginfo is read by classify_trap, when needed; other signals cost a ptrace
  // call only when one we delivered in place of another may be coming back.)
  if (sig != SIGTRAP && t.run.injected(sig)) {
    if (auto si = kernel_.get_siginfo(t.tid); si && delivered_before(t, *si)) {
      t.gdb.deliver_later(sig);
      keep_going(p, t);
      return;
    }
  }
  if (pass_signal(p, t, sig)) {
    return;
  }
  std::optional<StopEvent> ev;
  if (sig == SIGTRAP) {
    ev = classify_trap(p, t);
    if (!ev) {
      keep_going(p, t);
      return;
    }
  } else {
    ev = StopEvent{StopReason::Signal, p.pid, t.tid, sig};
  }
  make_pending(t, *ev);
}

// The thread that single-stepped the original instruction under one of our int3s stopped.
// Whatever stopped it, the int3 goes back; then the thread and those held for it go on.
void LinuxTarget::step_over_stopped(Process& p, LinuxThread& t, int sig, int event) {
  const Addr addr = p.step_over.addr();
  const Pid pid = p.pid;
  const Tid tid = t.tid;
  end_step_over(p);
  auto pc = t.regs.pc(tid);
  if (sig == SIGTRAP && event != 0) {
    handle_ptrace_event(p, t, event);  // clone/fork/exec inside the stepped syscall
  } else if ((sig == SIGTRAP || sig == (SIGTRAP | 0x80)) && pc && *pc != addr) {
    if (p.collector) {
      ProcessCodeView view(p);
      p.collector->stepped_over(tid, *pc, view);
    }
    if (auto ev = end_of_step(p, t, *pc)) {
      make_pending(t, *ev);
    }
  } else {
    handle_signal(p, t, sig);
  }
  Process* still = process(pid);
  if (still == nullptr) {
    return;
  }
  proceed(*still);  // (one stopped before the instruction ran meets the int3 again)
}

std::optional<StopEvent> LinuxTarget::end_of_step(Process& p, LinuxThread& t, Addr pc) {
  if (auto hw = debug_trap(p, t); hw.kind == DebugTrap::Kind::Report) {
    return hw.event;  // the stepped instruction hit a watchpoint
  }
  const ThreadAction& a = t.gdb.action();
  if (t.while_stepping) {
    while_step_ended(p, t, pc);
    if (a.kind != ResumeKind::Step) {
      return std::nullopt;  // the step was the tracepoint's alone
    }
  }
  switch (a.kind) {
    case ResumeKind::Continue:
      if (t.run.collector_step() && p.code.owned_by(pc, SiteOwner::Gdb)) {
        // A traced thread reached one of our int3s by stepping: it has not run it, report it
        // as the int3 would.
        return StopEvent{StopReason::SoftwareBreakpoint, p.pid, t.tid, SIGTRAP};
      }
      return std::nullopt;
    case ResumeKind::RangeStep:
      if (a.range_start <= pc && pc < a.range_end && !p.code.owned_by(pc, SiteOwner::Gdb)) {
        return std::nullopt;  // keep stepping through the range
      }
      break;
    case ResumeKind::Step:
    case ResumeKind::Stop:
      break;
  }
  if (p.code.owned_by(pc, SiteOwner::Tracepoint)) {
    collect_at_tracepoint(p, t, pc);  // a step that ends on a tracepoint is a hit, as in gdbserver
  }
  return StopEvent{StopReason::SingleStep, p.pid, t.tid, SIGTRAP};
}

std::optional<StopEvent> LinuxTarget::classify_trap(Process& p, LinuxThread& t) {
  StopEvent ev{StopReason::Signal, p.pid, t.tid, SIGTRAP};
  // A thread that cannot be asked about its trap (ESRCH) was taken out of its stop by a
  // SIGKILL: its end follows, and the trap (a collector's step, as often as not) is no signal
  // of the program's.
  auto killed_meanwhile = [](const base::Error& e) { return e.code == base::Errc::no_thread; };
  auto pc = t.regs.pc(t.tid);
  if (!pc) {
    return killed_meanwhile(pc.error()) ? std::nullopt : std::optional<StopEvent>(ev);
  }
  if (t.run.collector_step() && p.collector) {
    ProcessCodeView view(p);
    if (p.collector->stepped(t.tid, *pc, view) == StepVerdict::Stepped) {
      return end_of_step(p, t, *pc);
    }
  } else if (!t.run.stepping() && t.dr.dr7 == 0 && collector_site(p, *pc - 1)) {
    // The collector's int3 (the fast path of SoftEmulate: no siginfo needed).
    trapped_on_collector_site(p, t, *pc - 1);
    return std::nullopt;
  }
  auto si = kernel_.get_siginfo(t.tid);
  if (!si) {
    return killed_meanwhile(si.error()) ? std::nullopt : std::optional<StopEvent>(ev);
  }
  const int code = si->si_code;
  if (auto hw = debug_trap(p, t); hw.kind == DebugTrap::Kind::Report) {
    return hw.event;
  } else if (hw.kind == DebugTrap::Kind::Ignored && !t.run.stepping()) {
    return std::nullopt;
  }
  if ((code == SI_KERNEL || code == TRAP_BRKPT) && range_site(p, t, *pc - 1)) {
    return trapped_on_range_site(p, t, *pc - 1);
  }
  if ((code == SI_KERNEL || code == TRAP_BRKPT) && collector_site(p, *pc - 1)) {
    trapped_on_collector_site(p, t, *pc - 1);
    return std::nullopt;
  }
  if ((code == SI_KERNEL || code == TRAP_BRKPT) && p.code.contains(*pc - 1)) {
    const Addr addr = *pc - 1;
    (void)t.regs.set_pc(t.tid, addr);
    t.stop_pc = addr;
    if (p.code.owned_by(addr, SiteOwner::Tracepoint)) {
      collect_at_tracepoint(p, t, addr);
    }
    if (!p.code.owned_by(addr, SiteOwner::Gdb)) {
      // A tracepoint's alone (or one the run just took out): on, GDB not told.
      // GDB's step, or while-stepping, goes from the instruction itself: stepped over in place.
      if (p.code.contains(addr) && (t.run.stepping() || t.while_stepping || !step_over_out_of_line(p, t, addr))) {
        start_step_over(p, t, addr, 0);
      }
      return std::nullopt;
    }
    if (!t.run.stepping() && (!condition_holds(p, t, addr) || ran_commands(p, t, addr))) {
      // GDB's condition is false, or the commands ran in place of a stop: on, GDB not told.
      if (!step_over_out_of_line(p, t, addr)) {
        start_step_over(p, t, addr, 0);
      }
      return std::nullopt;
    }
    ev.reason = StopReason::SoftwareBreakpoint;
    return ev;
  }
  if (code == SI_KERNEL && ran_removed_int3(p.code, *pc)) {
    // The original instruction is back: the thread runs it, nobody told (as gdbserver drops a
    // hit of a breakpoint removed meanwhile).
    base::logf(base::LogCat::ptrace, "thread {}: trap of an int3 taken out at {:#x}; on", t.tid, *pc - 1);
    (void)t.regs.set_pc(t.tid, *pc - 1);
    t.stop_pc = *pc - 1;
    return std::nullopt;
  }
  if (t.run.stepping() || code == TRAP_TRACE) {
    if (t.run.stepping()) {
      return end_of_step(p, t, *pc);
    }
    ev.reason = StopReason::SingleStep;
  } else if (delivered_before(t, *si)) {
    t.gdb.deliver_later(SIGTRAP);
    return std::nullopt;
  }
  return ev;
}

// GDB had us deliver a signal in place of the one a thread stopped with (`signal SIGTRAP`
// after our SIGSTOP), and the thread blocked it (glibc blocks every signal around clone3 in
// pthread_create): the kernel queued it again, as sent by its tracer, and it stops the thread
// once unblocked. GDB has had its say: it is delivered, not reported a second time.
bool LinuxTarget::delivered_before(LinuxThread& t, const siginfo_t& si) {
  return si.si_code == SI_USER && si.si_pid == ::getpid() && t.run.took_injected(si.si_signo);
}

// The step a thread began inside a syscall stop was reported at the syscall's exit, where
// nothing ran yet: it steps again, and nobody else sees that stop.
bool LinuxTarget::step_on_past_syscall_exit(LinuxThread& t) {
  if (!t.step_from_syscall_stop) {
    return false;
  }
  const Addr from = *std::exchange(t.step_from_syscall_stop, std::nullopt);
  if (t.stop_pc != from) {
    return false;
  }
  auto si = kernel_.get_siginfo(t.tid);
  if (!si || si->si_code != TRAP_BRKPT) {
    return false;
  }
  base::logf(base::LogCat::ptrace, "thread {}: step reported at the syscall's exit; stepping on", t.tid);
  t.regs.forget();
  return static_cast<bool>(kernel_.resume(t.tid, true, 0));
}

void LinuxTarget::make_pending(LinuxThread& t, StopEvent ev) {
  base::logf(base::LogCat::ptrace, "thread {}: pending stop, reason {} signal {}", t.tid,
             static_cast<int>(ev.reason), ev.signal);
  pending_.hold(t, ev);
}

void LinuxTarget::keep_going(Process& p, LinuxThread& t) {
  if (p.step_over.holds(t.tid)) {
    // Another thread steps over an int3: this one waits (to go on after it if GDB wants it
    // running), and may be the last it waited for.
    if (t.gdb.resumed()) {
      p.step_over.pause(t.tid);
    } else {
      p.step_over.unpause(t.tid);
    }
    try_begin_step_over(p);
    return;
  }
  if (p.step_over.active()) {
    return;  // its own step-over begins once the others have stopped
  }
  if (!t.gdb.resumed() || PendingEvents::has_stop(t) || !t.stopped() || p.frozen || p.paused ||
      (all_stop() && all_stop_.stopping()) || p.collector_edit_waiters.contains(t.tid)) {
    return;  // GDB has it stopped, or a report is coming: it stays
  }
  if (auto res = run_thread(p, t, t.gdb.take_resume_signal()); !res) {
    base::logf(base::LogCat::ptrace, "resume {}: {}", t.tid, res.error().message());
  }
}

}  // namespace tracer
