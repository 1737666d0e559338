// SoftStep: the branch tracer of one thread that the server single-steps (btrace.md §10).
// It owns the thread's history ring and the little state a step needs: where the step
// started and what ran last. No ptrace here: LinuxTarget steps and reports each step.
#pragma once

#include <optional>

#include "arch/x86/instruction_length.hpp"
#include "tracer/btrace/ring_buffer_tracer.hpp"
#include "tracer/types.hpp"

namespace tracer {

class SoftStepTracer final : public BranchTracer {
 public:
  explicit SoftStepTracer(const BtraceConfig& config) : ring_("step", config) {}

  // About to PTRACE_SINGLESTEP from `from`, delivering sig (0: none).
  void begin_step(Addr from, int sig) {
    from_ = from;
    step_signal_ = sig;
  }
  Addr from() const { return from_; }
  int step_signal() const { return step_signal_; }

  // The instruction at from() ran and the thread is now at `to`: records the taken branch, if
  // it was one. Returns whether it was.
  bool stepped(const arch::x86::InstructionInfo& insn, Addr to);
  // The step delivered a signal and the thread stands at its handler's entry; nothing ran.
  // Records (last instruction that ran, handler) so that the blocks stay sequential.
  void entered_handler(Addr handler);

  // The pc after the last step, when the next step follows at once (saves a register read).
  void set_next_pc(std::optional<Addr> pc) { next_pc_ = pc; }
  std::optional<Addr> take_next_pc() {
    auto pc = next_pc_;
    next_pc_.reset();
    return pc;
  }

  base::Result<BtraceData> read(BtraceRead kind, Addr current_pc) override {
    return ring_.read(kind, current_pc);
  }
  BtraceConfig conf() const override { return ring_.conf(); }
  BtraceStats stats() const override { return ring_.stats(); }

 private:
  RingBufferTracer ring_;
  Addr from_ = 0;
  int step_signal_ = 0;
  std::optional<Addr> next_pc_;
  std::optional<Addr> last_ran_;  // the last instruction that ran
  bool last_was_branch_ = false;  // ... and it branched to where the thread is now
};

}  // namespace tracer
