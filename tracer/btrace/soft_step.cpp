// SoftStep bookkeeping: one step's outcome into the history ring.
#include "tracer/btrace/soft_step.hpp"

#include <csignal>

namespace tracer {

bool SoftStepTracer::stepped(const arch::x86::InstructionInfo& insn, Addr to) {
  ++stepped_;
  const bool branch = arch::x86::step_took_branch(insn, from_, to);
  if (to == from_ && !branch) {
    return false;  // did not run (restart) or one rep iteration: nothing changes
  }
  if (branch && recording_) {
    ring_.record(BranchSample{from_, to});
  }
  last_ran_ = from_;
  last_was_branch_ = branch;
  return branch;
}

void SoftStepTracer::syscall_returned(Addr to) {
  if (!syscall_) {
    return;
  }
  if (to != syscall_->at + syscall_->length) {
    if (recording_) {
      ring_.record(BranchSample{syscall_->at, to});
    }
    last_ran_ = syscall_->at;
    last_was_branch_ = true;
  }
  syscall_.reset();
}

void SoftStepTracer::entered_handler(Addr handler) {
  // The interrupted instruction at from() has not run. When the last instruction that ran
  // led to it sequentially, the delivery is a branch from that one; otherwise (nothing ran
  // yet, or it branched to from()) from() stands in for it so that no block is left empty.
  const Addr src = last_ran_ && !last_was_branch_ ? *last_ran_ : from_;
  if (recording_) {
    ring_.record(BranchSample{src, handler});
  }
  last_ran_ = src;
  last_was_branch_ = true;
}

void SoftStepTracer::performed(Addr from, Addr to, std::uint8_t length) {
  ++emulated_;
  const bool branch = to != from + length;
  if (branch && recording_) {
    ring_.record(BranchSample{from, to});
  }
  last_ran_ = from;
  last_was_branch_ = branch;
}

void SoftStepTracer::lost_track(Addr found_at) {
  ring_.record(BranchSample::gap(found_at));
  last_ran_.reset();
  last_was_branch_ = false;
}

}  // namespace tracer

// --- SoftStepCollector ---------------------------------------------------------------------

namespace tracer {
namespace {

// The trap a step of ours produces: TRAP_TRACE, or TRAP_BRKPT at the end of a system call.
bool is_step_trap(int si_code) { return si_code == TRAP_TRACE || si_code == TRAP_BRKPT; }

}  // namespace

base::Result<std::unique_ptr<BranchTracer>> SoftStepCollector::make(Tid /*tid*/, const BtraceConfig& config) {
  return std::unique_ptr<BranchTracer>(std::make_unique<SoftStepTracer>(config));
}

base::Result<std::unique_ptr<Collector>> make_soft_step_collector(const CollectorRequest& /*request*/) {
  return std::unique_ptr<Collector>(std::make_unique<SoftStepCollector>());
}

bool SoftStepCollector::wants_step(Tid tid, Addr pc, int sig, bool /*core_steps*/, CollectorHost& /*host*/) {
  SoftStepTracer* s = stepper(tid);
  if (s == nullptr) {
    return false;
  }
  s->begin_step(pc, sig);
  return true;
}

const arch::x86::InstructionInfo* SoftStepCollector::decode_at(Addr pc, CollectorHost& host) {
  if (const auto* hit = insn_cache_.find(pc)) {
    return hit;
  }
  auto bytes = host.read_code(pc, 15);
  if (!bytes) {
    return nullptr;
  }
  auto info = arch::x86::decode_instruction(*bytes, host.isa());
  if (!info) {
    return nullptr;
  }
  return &insn_cache_.insert(pc, *info);
}

bool SoftStepCollector::record(Tid tid, SoftStepTracer& s, Addr to, CollectorHost& host) {
  const Addr from = s.from();
  if (s.step_signal() != 0) {
    // Delivering a handled signal stops at the handler's entry (si_code SIGTRAP).
    if (auto code = host.stop_si_code(tid); code && *code == SIGTRAP) {
      s.entered_handler(to);
      handler_entered(tid, host);
      return true;
    }
  }
  const arch::x86::InstructionInfo* insn = decode_at(from, host);
  if (insn != nullptr && to != from + insn->length) {
    // Not where the decoded instruction leads: the code may have been rewritten since.
    insn_cache_.erase(from);
    insn = decode_at(from, host);
  }
  step_done(tid, insn);
  if (insn == nullptr) {
    if (to != from) {
      s.lost_track(to);  // what ran there is unknown: a gap, never a made-up branch
    }
    return true;
  }
  const bool trap_insn = insn->kind == arch::x86::InsnKind::Trap;
  if (trap_insn || (to == from && insn->kind != arch::x86::InsnKind::RepString)) {
    auto code = host.stop_si_code(tid);
    if (code && !is_step_trap(*code)) {
      if (trap_insn && to != from) {
        s.stepped(*insn, to);  // int3 / int n ran, then trapped
      }
      return false;
    }
  }
  s.stepped(*insn, to);
  return true;
}

StepVerdict SoftStepCollector::stepped(Tid tid, Addr pc, CollectorHost& host) {
  SoftStepTracer* s = stepper(tid);
  if (s == nullptr) {
    return StepVerdict::NotMine;
  }
  // The step ran into one of the core's int3s at its start: the int3 ran, not the program.
  if (pc == s->from() + 1 && s->step_signal() == 0 && host.is_breakpoint_site(s->from())) {
    return StepVerdict::NotMine;
  }
  return record(tid, *s, pc, host) ? StepVerdict::Stepped : StepVerdict::NotMine;
}

bool SoftStepCollector::syscall_stopped(Tid tid, bool entry, bool /*caught*/, CollectorHost& host) {
  SoftStepTracer* s = stepper(tid);
  auto pc = host.pc(tid);
  if (s == nullptr || !pc) {
    return true;
  }
  if (!entry) {
    s->syscall_returned(*pc);
    return true;
  }
  const arch::x86::InstructionInfo* insn = decode_at(s->from(), host);
  if (insn != nullptr && insn->kind == arch::x86::InsnKind::Syscall && *pc == s->from() + insn->length) {
    s->entered_syscall(insn->length);
  }
  return true;
}

void SoftStepCollector::stepped_over(Tid tid, Addr pc, CollectorHost& host) {
  if (SoftStepTracer* s = stepper(tid)) {
    (void)record(tid, *s, pc, host);
  }
}

}  // namespace tracer
