// The int3s a collector plants (SoftEmulate's, on branches): a thread never runs from one. At
// its trap, or before it runs from one, the collector performs the instruction there (or the
// core steps over it); a step of GDB's may end right there. They leave with tracing, from a
// fork child's copy of memory, and from memory a vfork child shares.
#include "base/log.hpp"
#include "tracer/linux/code_view.hpp"
#include "tracer/linux/linux_target.hpp"

namespace tracer {

bool LinuxTarget::collector_site(const Process& p, Addr addr) const {
  return p.collector && p.code.owned_by(addr, SiteOwner::Collector) && !p.code.owned_by(addr, SiteOwner::Gdb);
}

LinuxTarget::SitePass LinuxTarget::pass_collector_site(Process& p, LinuxThread& t, int& sig) {
  auto pc = t.regs.pc(t.tid);
  if (!pc || !collector_site(p, *pc)) {
    return SitePass::NotOnSite;
  }
  if (sig != 0) {
    // The signal is delivered before the instruction runs: the CPU's own step does both.
    start_step_over(p, t, *pc, sig);
    sig = 0;
    return SitePass::Held;
  }
  ProcessCodeView view(p);
  if (p.collector->at_site(t.tid, *pc, false, view) == SiteVerdict::StepOver) {
    start_step_over(p, t, *pc, 0);
    return SitePass::Held;
  }
  const ThreadAction& a = t.gdb.action();
  if (a.kind == ResumeKind::Step || a.kind == ResumeKind::RangeStep) {
    auto next = t.regs.pc(t.tid);
    const bool in_range = a.kind == ResumeKind::RangeStep && next && a.range_start <= *next &&
                          *next < a.range_end && !p.code.owned_by(*next, SiteOwner::Gdb);
    if (!in_range) {
      make_pending(t, StopEvent{StopReason::SingleStep, p.pid, t.tid, SIGTRAP});
      events_.kick();
      return SitePass::Held;
    }
  }
  return SitePass::Performed;
}

void LinuxTarget::trapped_on_collector_site(Process& p, LinuxThread& t, Addr addr) {
  ProcessCodeView view(p);
  if (p.collector->at_site(t.tid, addr, true, view) == SiteVerdict::Performed) {
    return;
  }
  (void)t.regs.set_pc(t.tid, addr);  // back onto it: stepped over when it runs on
  t.stop_pc = addr;
}

}  // namespace tracer
