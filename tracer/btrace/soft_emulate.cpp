// SoftEmulate: planning native runs, performing branches at their int3s, and the bookkeeping
// that keeps the history equal to single-stepping's.
#include "tracer/btrace/soft_emulate.hpp"

#include <cstring>

namespace tracer {
namespace {

// rt_sigreturn's restorer is two instructions (mov $15,%eax; syscall): step at most this many.
constexpr int kSigreturnSteps = 4;

// Inferior memory for the emulator: words through the host, our int3s hidden.
class HostMemory final : public arch::x86::BranchMemory {
 public:
  explicit HostMemory(CollectorHost& host) : host_(host) {}
  base::Result<std::uint64_t> read_u64(std::uint64_t addr) override {
    auto bytes = host_.read_code(addr, 8);
    if (!bytes) {
      return std::move(bytes).error();
    }
    if (bytes->size() != 8) {
      return base::make_error(base::Errc::system, "short read");
    }
    std::uint64_t value = 0;
    std::memcpy(&value, bytes->data(), 8);
    return value;
  }
  base::Result<void> write_u64(std::uint64_t addr, std::uint64_t value) override {
    Bytes bytes(8);
    std::memcpy(bytes.data(), &value, 8);
    return host_.write_memory(addr, bytes);
  }

 private:
  CollectorHost& host_;
};

}  // namespace

base::Result<std::unique_ptr<BranchTracer>> SoftEmulateCollector::make(Tid /*tid*/, const BtraceConfig& config) {
  return std::unique_ptr<BranchTracer>(std::make_unique<SoftStepTracer>(config, "soft"));
}

void SoftEmulateCollector::stop(Tid tid) {
  runs_.erase(tid);
  SoftStepCollector::stop(tid);
}

void SoftEmulateCollector::thread_exited(Tid tid) {
  runs_.erase(tid);
  SoftStepCollector::thread_exited(tid);
}

void SoftEmulateCollector::code_changed() {
  SoftStepCollector::code_changed();
  code_.clear();
}

void SoftEmulateCollector::settle(SoftStepTracer& s, Run& r, Addr pc, bool need_last, CollectorHost& host) {
  if (!r.native) {
    return;
  }
  r.native = false;
  if (pc == r.start) {
    return;  // nothing ran
  }
  if (pc < r.start || pc > r.stop) {
    s.lost_track(pc);  // it left its straight line without passing our int3
    code_.clear();
    return;
  }
  if (need_last) {
    if (auto last = code_.previous(r.start, pc, host)) {
      s.ran_through(*last);
    } else {
      s.lost_track(pc);
    }
  }
}

bool SoftEmulateCollector::wants_step(Tid tid, Addr pc, int sig, bool core_steps, CollectorHost& host) {
  SoftStepTracer* s = stepper(tid);
  if (s == nullptr) {
    return false;
  }
  Run& r = runs_[tid];
  settle(*s, r, pc, sig != 0, host);
  if (restorers_.count(pc) != 0) {
    r.sigreturn_steps = kSigreturnSteps;  // back from a handler: step into rt_sigreturn
  }
  if (sig != 0 || core_steps || r.sigreturn_steps > 0) {
    s->begin_step(pc, sig);
    return true;
  }
  auto plant_run = [&]() -> base::Result<Planted> {
    auto stop = code_.stop_from(pc, host);
    if (!stop) {
      return std::move(stop).error();
    }
    r.stop = *stop;
    return host.plant(*stop, pc, code_.code_of(pc));
  };
  auto planted = plant_run();
  if (planted && *planted == Planted::Stale) {
    code_.clear();  // the code changed since we decoded it (written at run time, mapped again)
    planted = plant_run();
  }
  if (planted && *planted == Planted::Fresh) {
    code_.forget_branch(r.stop);  // decoded again at its first trap
  }
  if (!planted || *planted == Planted::Stale) {
    s->begin_step(pc, 0);  // code we cannot read or patch: the CPU decides, a step at a time
    return true;
  }
  r.native = true;
  r.start = pc;
  return false;
}

SiteVerdict SoftEmulateCollector::at_site(Tid tid, Addr addr, bool trapped, CollectorHost& host) {
  const auto& branch = code_.branch_at(addr, host);
  if (!branch) {
    return SiteVerdict::StepOver;
  }
  auto gpr = host.registers(tid);
  if (!gpr) {
    return SiteVerdict::StepOver;
  }
  HostMemory memory(host);
  auto out = arch::x86::emulate_branch(*branch, addr, *gpr, memory);
  if (!out || !host.set_registers(tid, *gpr)) {
    return SiteVerdict::StepOver;  // a target or stack it cannot reach: the CPU faults on it
  }
  if (SoftStepTracer* s = stepper(tid)) {
    Run& r = runs_[tid];
    if (trapped && (!r.native || addr != r.stop)) {
      s->lost_track(addr);  // it reached this int3 by a path we did not plan
    }
    r.native = false;
    s->performed(addr, out->next, branch->length);
  }
  return SiteVerdict::Performed;
}

void SoftEmulateCollector::handler_entered(Tid tid, CollectorHost& host) {
  // The handler returns to the frame's restorer, which calls rt_sigreturn.
  auto gpr = host.registers(tid);
  if (!gpr) {
    return;
  }
  HostMemory memory(host);
  if (auto restorer = memory.read_u64((*gpr)[arch::x86::kRsp])) {
    restorers_.insert(*restorer);
  }
}

void SoftEmulateCollector::step_done(Tid tid, const arch::x86::InstructionInfo* insn) {
  auto it = runs_.find(tid);
  if (it == runs_.end() || it->second.sigreturn_steps == 0) {
    return;
  }
  Run& r = it->second;
  r.sigreturn_steps = insn != nullptr && insn->kind == arch::x86::InsnKind::Syscall ? 0 : r.sigreturn_steps - 1;
}

}  // namespace tracer
