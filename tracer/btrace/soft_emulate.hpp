// SoftEmulate: the software collector that stops a thread only at branches. Before a traced
// thread runs from T, the collector decodes forward from T to the first branch B and plants
// an int3 there (StraightLineMap); the thread runs T..B natively, traps on B, and the server
// performs B on its registers and stack (arch::x86::emulate_branch), records it, and lets the
// thread run on from the target. The int3 stays: the CPU never executes B itself.
//
// What it does not emulate it single-steps and records as SoftStep does (signal delivery, GDB's
// own steps, the rt_sigreturn of a signal handler's return, far transfers, code it cannot read),
// so its history equals SoftStep's record for record. Where it loses the thread's path (code
// changed under an int3, a thread found off its straight line) it records a gap.
#pragma once

#include <unordered_map>
#include <unordered_set>

#include "tracer/btrace/soft_step.hpp"
#include "tracer/btrace/straight_line.hpp"

namespace tracer {

class SoftEmulateCollector final : public SoftStepCollector {
 public:
  std::string_view backend() const override { return "soft"; }
  void stop(Tid tid) override;
  void thread_exited(Tid tid) override;
  bool wants_step(Tid tid, Addr pc, int sig, bool core_steps, CollectorHost& host) override;
  SiteVerdict at_site(Tid tid, Addr addr, bool trapped, CollectorHost& host) override;
  void code_changed() override;

  std::size_t cached_runs() const { return code_.runs(); }

 protected:
  base::Result<std::unique_ptr<BranchTracer>> make(Tid tid, const BtraceConfig& config) override;
  void handler_entered(Tid tid, CollectorHost& host) override;
  void step_done(Tid tid, const arch::x86::InstructionInfo* insn) override;

 private:
  // Where a traced thread was let run natively: from start, straight to the int3 at stop.
  struct Run {
    bool native = false;
    Addr start = 0;
    Addr stop = 0;
    int sigreturn_steps = 0;  // stepping through a signal handler's restorer
  };
  // The thread stopped at pc after running natively: anything but a point of its straight
  // line is a lost path (a gap). need_last: tell the tracer which instruction ran last.
  void settle(SoftStepTracer& s, Run& r, Addr pc, bool need_last, CollectorHost& host);

  std::unordered_map<Tid, Run> runs_;
  std::unordered_set<Addr> restorers_;  // return addresses of signal frames (rt_sigreturn)
  StraightLineMap code_;
};

}  // namespace tracer
