// Trace experiments on Linux: the experiment's tracepoints are int3s of their own in one process
// (the current one when the run starts). A thread that hits one collects there and goes on,
// over the int3 by an out-of-line copy as a false breakpoint condition does: no other thread
// stops and GDB hears of nothing. GDB's own breakpoint at the same address still stops (after
// the collection). A hit that ends the run (pass count, full buffer, an error) takes the int3s out.
#include <algorithm>

#include <fmt/format.h>

#include "base/log.hpp"
#include "tracer/linux/linux_target.hpp"
#include "tracer/linux/thread_machine.hpp"

namespace tracer {

Result<void> LinuxTarget::place_tracepoints() {
  if (experiment_.running() && (traced_pid_ == 0 || process(traced_pid_) == nullptr)) {
    traced_pid_ = current_;
    tracepoint_sites_.clear();
    agent_.collecting = false;  // (the jumps went with the process the last run traced)
  }
  Process* p = process(traced_pid_);
  if (p == nullptr) {
    tracepoint_sites_.clear();
    agent_.collecting = false;
    return experiment_.running() ? Result<void>(base::make_error(base::Errc::no_process, "no process to trace"))
                                : base::success();
  }
  if (experiment_.running() && !agent_.collecting) {
    place_fast_tracepoints(*p);  // (the run's start)
  } else if (!experiment_.running()) {
    remove_fast_tracepoints(*p);
  }
  // An int3 for each tracepoint without its jump (one that gave way has an int3 already),
  // and for the agent's call to us while its jumps stand.
  retire_jumps(*p);
  std::vector<Addr> wanted = experiment_.sites();
  std::erase_if(wanted, [&](Addr addr) { return agent_.jumps.count(addr) != 0; });
  if (agent_.collecting && agent_.pid == p->pid) {
    wanted.push_back(agent_.seen.notify);
  }
  for (auto it = tracepoint_sites_.begin(); it != tracepoint_sites_.end();) {
    if (std::find(wanted.begin(), wanted.end(), *it) == wanted.end()) {
      (void)p->code.unplant(*it, SiteOwner::Tracepoint);
      it = tracepoint_sites_.erase(it);
    } else {
      ++it;
    }
  }
  for (Addr addr : wanted) {
    if (tracepoint_sites_.count(addr) != 0) {
      continue;
    }
    if (auto planted = p->code.plant(addr, SiteOwner::Tracepoint); !planted) {
      return base::make_error(planted.error().code,
                              fmt::format("cannot place the tracepoint at {:#x}: {}", addr, planted.error().message()));
    }
    tracepoint_sites_.insert(addr);
  }
  base::logf(base::LogCat::ptrace, "process {}: {} tracepoint int3s", p->pid, tracepoint_sites_.size());
  return base::success();
}

void LinuxTarget::collect_at_tracepoint(Process& p, LinuxThread& t, Addr addr) {
  if (p.pid != traced_pid_) {
    return;
  }
  const bool agent_call = agent_.collecting && agent_.pid == p.pid && addr == agent_.seen.notify;
  take_agent_frames();  // (the fast tracepoints' frames first: the buffer keeps hits in order)
  if (agent_call || !experiment_.running()) {
    return;
  }
  t.collected_at = addr;
  ThreadMachine machine(p, t);
  const trace::HitOutcome out = experiment_.hit(addr, machine, trace::timestamp_now());
  base::logf(base::LogCat::ptrace, "thread {}: tracepoint hit at {:#x}, {} frames", t.tid, addr,
             experiment_.buffer().count());
  if (out.steps > 0) {
    t.while_stepping = LinuxThread::WhileStepping{out.stepping_tracepoint, addr, 0, out.steps};
  }
  if (out.stop_run) {
    (void)place_tracepoints();
  }
}

void LinuxTarget::while_step_ended(Process& p, LinuxThread& t, Addr pc) {
  LinuxThread::WhileStepping& ws = *t.while_stepping;
  ++ws.done;
  ThreadMachine machine(p, t);
  const bool stopped = experiment_.step(ws.tracepoint, ws.address, ws.done, pc, machine, trace::timestamp_now());
  base::logf(base::LogCat::ptrace, "thread {}: while-stepping step {} of {} at {:#x}", t.tid, ws.done, ws.total, pc);
  if (stopped || ws.done >= ws.total || !experiment_.running()) {
    t.while_stepping.reset();
  }
  if (stopped) {
    (void)place_tracepoints();
  }
}

bool LinuxTarget::resumed_on_tracepoint(Process& p, LinuxThread& t, int sig) {
  if (t.collected_at == 0) {
    return false;  // (every resume passes here: no register read unless it collected)
  }
  auto pc = t.regs.pc(t.tid);
  if (!pc || *pc != t.collected_at || !p.code.owned_by(*pc, SiteOwner::Tracepoint) || p.code.owned_by(*pc, SiteOwner::Gdb)) {
    return false;
  }
  if (!t.gdb.stepping() && sig == 0 && step_over_out_of_line(p, t, *pc)) {
    return false;  // it runs the copy
  }
  start_step_over(p, t, *pc, sig);
  return true;
}

}  // namespace tracer
