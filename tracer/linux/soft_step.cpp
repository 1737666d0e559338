// SoftStep bookkeeping: one step's outcome into the history ring.
#include "tracer/linux/soft_step.hpp"

namespace tracer {

bool SoftStepTracer::stepped(const arch::x86::InstructionInfo& insn, Addr to) {
  const bool branch = arch::x86::step_took_branch(insn, from_, to);
  if (to == from_ && !branch) {
    return false;  // did not run (restart) or one rep iteration: nothing changes
  }
  if (branch) {
    ring_.record(BranchSample{from_, to});
  }
  last_ran_ = from_;
  last_was_branch_ = branch;
  return branch;
}

void SoftStepTracer::entered_handler(Addr handler) {
  // The interrupted instruction at from() has not run. When the last instruction that ran
  // led to it sequentially, the delivery is a branch from that one; otherwise (nothing ran
  // yet, or it branched to from()) from() stands in for it so that no block is left empty.
  const Addr src = last_ran_ && !last_was_branch_ ? *last_ran_ : from_;
  ring_.record(BranchSample{src, handler});
  last_ran_ = src;
  last_was_branch_ = true;
}

}  // namespace tracer
