// Threads and processes being born or replaced: clone, fork, vfork (and vforkdone), exec.
// A fork child is traced from birth (PTRACE_O_TRACEFORK) and becomes a Process of its own:
// reported to GDB and kept stopped when GDB follows forks, otherwise given its original
// bytes back (none of our int3s) and let go.
#include <sys/ptrace.h>
#include <sys/wait.h>

#include <sched.h>
#include <sys/syscall.h>

#include <cerrno>
#include <cstring>
#include <csignal>
#include <optional>
#include <utility>

#include "base/log.hpp"
#include "tracer/linux/linux_target.hpp"
#include "tracer/linux/procfs.hpp"
#include "tracer/linux/ptrace_calls.hpp"

namespace tracer {
namespace {

// Whether the fork event of thread `parent` made a child that shares its memory: clone with
// CLONE_VM and SIGCHLD as its exit signal (or clone3 so) is reported as a fork, not a thread.
bool child_shares_memory(Kernel& kernel, const Process& p, Tid parent) {
  arch::x86::RawRegisters regs;
  if (!kernel.read_gprs(parent, regs)) {
    return false;
  }
  const bool i386 = p.isa == arch::x86::Isa::I386;
  const std::uint64_t number = regs.gpr[arch::x86::kOrigRax];
  const std::uint64_t first = regs.gpr[i386 ? arch::x86::kRbx : arch::x86::kRdi];
  if (number == (i386 ? 120u : SYS_clone)) {
    return (first & CLONE_VM) != 0;
  }
  if (number == (i386 ? 435u : SYS_clone3)) {
    auto memory = kernel.memory(p.pid);
    auto args = memory ? (*memory)->read(first, sizeof(std::uint64_t)) : base::Result<Bytes>(Bytes{});
    std::uint64_t flags = 0;  // (struct clone_args begins with its flags)
    if (args && args->size() == sizeof flags) {
      std::memcpy(&flags, args->data(), sizeof flags);
    }
    return (flags & CLONE_VM) != 0;
  }
  return false;
}

}  // namespace

void LinuxTarget::handle_ptrace_event(Process& p, LinuxThread& t, int event) {
  switch (event) {
    case PTRACE_EVENT_CLONE:
      if (auto msg = kernel_.event_message(t.tid)) {
        on_clone(p, t, static_cast<Tid>(*msg));
      }
      break;
    case PTRACE_EVENT_FORK:
    case PTRACE_EVENT_VFORK:
      if (auto msg = kernel_.event_message(t.tid)) {
        on_fork(p, t, static_cast<Pid>(*msg), event == PTRACE_EVENT_VFORK);
        return;
      }
      break;
    case PTRACE_EVENT_VFORK_DONE:
      t.in_vfork = false;
      if (report_vfork_ && p.known_to_gdb) {
        make_pending(t, StopEvent{StopReason::VForkDone, p.pid, t.tid, SIGTRAP});
        return;
      }
      break;
    case PTRACE_EVENT_EXEC:
      on_exec(p, t);
      return;
    default:
      break;
  }
  keep_going(p, t);
}

// The first stop of a new thread or fork child: it runs if its parent's side wants it to.
void LinuxTarget::thread_started(Process& p, LinuxThread& t) {
  if (p.release_when_started) {
    release_fork_child(p);
    return;
  }
  keep_going(p, t);
}

// A new thread runs with its parent, as a continue (never a step), unless GDB asked to hear of
// the parent's clones: then the parent stops with the news and the child waits, stopped, until
// GDB resumes it (GDB moves it out of a displaced step's copy first).
void LinuxTarget::on_clone(Process& p, LinuxThread& parent, Tid child) {
  // (A thread already known was announced already: the parent goes on.)
  const bool announce = p.known_to_gdb && parent.gdb.options().clone_events && p.find(child) == nullptr;
  if (p.find(child) == nullptr) {
    LinuxThread& c = p.add_thread(child);
    c.run.born();  // running until its first stop
    if (parent.gdb.resumed() && !announce) {
      c.gdb.runs_on(ThreadAction{child, p.pid, ResumeKind::Continue});
    }
    collector_thread_born(p, c);
    log_event("thread_start", p.pid, child);
    if (announce) {
      StopEvent ev{StopReason::Clone, p.pid, parent.tid, SIGTRAP};
      ev.child_tid = child;
      make_pending(parent, ev);
    }
    std::optional<int> status;
    if (auto early = early_stops_.find(child); early != early_stops_.end()) {
      status = early->second;
      early_stops_.erase(early);
    } else if (announce) {
      // GDB, told of it, reads its registers at once: its first stop is taken now.
      if (auto waited = kernel_.wait_for(child)) {
        status = *waited;
      }
    }
    if (status) {
      handle_status(child, *status);
    }
  }
  if (p.collector) {
    // In the collector's own code, both (a cache of the collector's in the process): back to the program's
    // at once, so that no stop GDB hears of here (an interrupt's) shows it; the collector brings
    // each in again as it resumes.
    if (auto moved = p.collector->forked(parent.tid, child)) {
      parent.regs.forget();
      parent.stop_pc = *moved;
    }
  }
  if (!announce) {
    keep_going(p, parent);
  }
}

void LinuxTarget::on_fork(Process& p, LinuxThread& t, Pid child, bool vfork) {
  base::logf(base::LogCat::ptrace, "{} {}: child {}", vfork ? "vfork" : "fork", t.tid, child);
  Process& c = add_process(child, ProcessOrigin::Forked);
  log_event(vfork ? "vfork" : "fork", p.pid, t.tid, {}, child);
  c.attached = p.attached;
  c.known_to_gdb = false;
  c.vfork_parent = vfork ? p.pid : 0;
  c.forked_by = p.pid;
  c.catch_syscalls = p.catch_syscalls;  // as gdbserver: GDB does not send it again
  // A child in its parent's memory: its code, int3s and what a collector keeps in it are its parent's.
  const bool shared = vfork || child_shares_memory(kernel_, p, t.tid);
  c.memory_of = shared ? p.pid : 0;
  if (shared) {
    // The child runs in its parent's memory, untraced: the collector's int3s leave it (they
    // come back as the parent's threads run again).
    p.code.unplant_all(SiteOwner::Collector);
    // Nor may it meet the int3 a range step runs to: that thread steps again instead.
    for (auto& [tid, o] : p.threads) {
      if (p.range_stops > 0 && o.range_stop != 0) {
        drop_range_stop(p, o);
        if (o.running()) {
          request_stop(o);
        }
      }
    }
  }
  c.code.inherit(p.code);  // the child's memory holds our int3s and slots too (the very bytes, after vfork)
  c.conditions = p.conditions;
  c.commands = p.commands;
  LinuxThread& ct = c.add_thread(child);
  ct.run.born();
  const bool report = p.known_to_gdb && (vfork ? report_vfork_ : report_fork_);
  if (vfork) {
    t.in_vfork = true;  // once resumed it waits for the child's exec or exit
  }
  if (report) {
    StopEvent ev{vfork ? StopReason::VFork : StopReason::Fork, p.pid, t.tid, SIGTRAP};
    ev.child_pid = child;
    make_pending(t, ev);
  } else {
    c.release_when_started = true;
  }
  // Its first stop is on its way (a SIGSTOP the kernel queued at birth): take it now, so that
  // GDB, told of the child, finds it stopped.
  int status = 0;
  if (auto early = early_stops_.find(child); early != early_stops_.end()) {
    status = early->second;
    early_stops_.erase(early);
  } else {
    status = kernel_.wait_for(child).value_or(0);
  }
  if (!shared) {
    c.code.unplant_all(SiteOwner::Collector);  // its copy of memory keeps GDB's int3s only
    c.code.unplant_all(SiteOwner::Range);
  }
  if (p.collector && WIFSTOPPED(status)) {
    // In the collector's own code, both: back to the program's before GDB hears.
    if (auto moved = p.collector->forked(t.tid, child)) {
      t.regs.forget();
      t.stop_pc = *moved;
    }
    if (!shared) {
      // What the collector left in the child's copy of memory is what it records with, if it
      // records (a vfork child does from its exec: until then what it would use is its
      // parent's; a clone(CLONE_VM) child's is its parent's, never taken out through it).
      ProcessCodeView child_view(c);
      c.collector = p.collector->fork_heir(child_view);
    }
  }
  handle_status(child, status);
  if (!report) {
    keep_going(p, t);
  }
}

void LinuxTarget::hand_back_vfork_memory(Process& child) {
  if (child.vfork_parent == 0) {
    return;
  }
  if (Process* parent = process(child.vfork_parent)) {
    parent->code.adopt(child.code);
  }
}

// A fork child nobody debugs: our int3s out of its memory (unless shared with the vfork
// parent), then it runs free.
void LinuxTarget::release_fork_child(Process& c) {
  if (c.memory_of == 0) {
    c.code.remove_all();
  } else {
    c.code.forget_all();  // (its parent's int3s, in its parent's memory)
  }
  release_collector(c);  // (what its parent's collector left in its copy of memory)
  base::logf(base::LogCat::ptrace, "fork child {} released", c.pid);
  for (auto& [tid, t] : c.threads) {
    (void)kernel_.detach(tid, 0);
  }
  forget_process(c.pid);
}

// The process exec'd: other threads are gone, the reporter became the leader, our int3s and
// debug registers vanished with the old image.
void LinuxTarget::on_exec(Process& p, LinuxThread& t) {
  // The thread that called execve (maybe not the leader) is the leader now: it keeps what GDB
  // asked of the former thread (scheduler locking resumes only that one).
  LinuxThread self = t;
  log_event("exec", p.pid, t.tid, procfs::executable(p.pid));
  if (auto former = kernel_.event_message(t.tid); former && static_cast<Tid>(*former) != t.tid) {
    if (const LinuxThread* execer = p.find(static_cast<Tid>(*former))) {
      self.gdb.took_over_from(execer->gdb, p.pid);
      self.run.took_over_from(execer->run);
    }
  }
  self.tid = p.pid;
  self.dr = DrValues{};
  self.in_vfork = false;
  if (p.collector) {
    for (const auto& [tid, other] : p.threads) {
      if (tid != p.pid && tid != t.tid) {
        p.collector->thread_exited(tid);
      }
    }
    p.collector->code_changed();
    p.collector->exec_happened();
  }
  p.threads.clear();
  p.threads.insert_or_assign(p.pid, self);
  hand_back_vfork_memory(p);  // a vfork child's int3s stay in its parent's memory
  pending_.drop_held_exits_of(p.pid);  // the exec killed those threads: GDB learns it from the exec
  p.code.forget_all();  // (slots too)
  p.conditions.clear();
  p.commands.clear();
  p.dr_slots = arch::x86::DebugSlots{};
  p.step_over.abandon();  // (its thread, if not this one, is gone; the old image with it)
  p.thread_db.reset();  // another program, maybe another glibc
  p.thread_db_host.reset();
  p.vfork_parent = 0;  // its own memory now: the parent gets vforkdone
  p.memory_of = 0;
  p.isa = procfs::executable_isa(p.pid);  // a 64-bit program may exec a 32-bit one, and back
  open_memory(p);
  LinuxThread& leader = p.threads.at(p.pid);
  leader.range_stop = 0;  // (its int3 went with the old image)
  p.range_stops = 0;
  std::optional<std::string> unrecorded;  // why the program it runs now cannot be recorded
  if (auto config = std::exchange(p.record_at_exec, std::nullopt)) {
    if (auto ok = enable_btrace(p.pid, *config); !ok) {  // a vfork child asked to record
      base::logf(base::LogCat::ptrace, "{}: recording from its exec: {}", p.pid, ok.error().message());
      unrecorded = ok.error().message();
    }
  } else if (p.collector && p.collector->traced_count() != 0) {
    unrecorded = p.collector->cannot_record(p.pid);  // (a 32-bit program, seccomp's strict mode)
  }
  if (unrecorded) {
    log_event("unrecorded", p.pid, p.pid, *unrecorded + "; it runs natively, unrecorded");
  }
  if (report_exec_ && p.known_to_gdb) {
    StopEvent ev{StopReason::Exec, p.pid, p.pid, SIGTRAP};
    ev.exec_path = exec_file(p.pid).value_or("");
    make_pending(leader, std::move(ev));
    return;
  }
  keep_going(p, leader);
}

}  // namespace tracer
