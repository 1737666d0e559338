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
//
// With a scope (--btrace-scope), a branch into code out of scope is recorded and the thread
// runs there natively. When it left by a call or jump whose return address is in scope, an
// int3 there catches its return, recorded as a branch from where it went (the callee shows
// as its first instruction, then returns); what it calls back meanwhile (deeper on the stack)
// runs unrecorded. Left any other way (a return), its branches are performed unrecorded until
// it is back in scope, where a gap starts the history again; so does a stack found unwound past.
#pragma once

#include <unordered_map>
#include <unordered_set>

#include "tracer/backend.hpp"
#include "tracer/btrace/scope_map.hpp"
#include "tracer/btrace/soft_step.hpp"
#include "tracer/btrace/straight_line.hpp"

namespace tracer {

class SoftEmulateCollector final : public SoftStepCollector {
 public:
  explicit SoftEmulateCollector(BtraceScope scope = {}) : scope_(std::move(scope)) {}
  std::string_view backend() const override { return backend_name(Backend::Soft); }
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
    Addr call_return = 0;     // the last call performed in scope: its return address,
    Addr call_sp = 0;         // and where it lies on the stack
  };
  // The thread stopped at pc after running natively: anything but a point of its straight
  // line is a lost path (a gap). need_last: tell the tracer which instruction ran last.
  void settle(SoftStepTracer& s, Run& r, Addr pc, bool need_last, CollectorHost& host);

  // A traced thread in code out of scope.
  struct Outside {
    Addr entered = 0;    // where it went: shown as the callee when it returns
    Addr return_to = 0;  // the int3 waiting for its return (0: none, it is stepped back)
    Addr sp = 0;         // its stack pointer there: deeper is a callback, higher is back home
  };
  // The branch just performed took tid out of scope to `target`; gpr: its registers after it.
  void leave_scope(Tid tid, SoftStepTracer& s, const Run& r, Addr target, const arch::x86::Gprs& gpr,
                   CollectorHost& host);
  // tid, out of scope, is at pc in scope with stack pointer sp: back (recording again, true)
  // or in a callback (false).
  bool come_back(Tid tid, SoftStepTracer& s, Addr pc, Addr sp);

  std::unordered_map<Tid, Run> runs_;
  std::unordered_map<Tid, Outside> outside_;
  ScopeMap scope_;
  std::unordered_set<Addr> restorers_;  // return addresses of signal frames (rt_sigreturn)
  StraightLineMap code_;
};

// --btrace=soft: the collector, recording what the request's scope names.
base::Result<std::unique_ptr<Collector>> make_soft_emulate_collector(const CollectorRequest& request);

}  // namespace tracer
