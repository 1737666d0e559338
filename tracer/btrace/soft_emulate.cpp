// SoftEmulate: planning native runs, performing branches at their int3s, and the bookkeeping
// that keeps the history equal to single-stepping's.
#include "tracer/btrace/soft_emulate.hpp"

#include <cstring>
#include <string>

#include "arch/x86/register_roles.hpp"

namespace tracer {
namespace {

// rt_sigreturn's restorer is two instructions (mov $15,%eax; syscall): step at most this many.
constexpr int kSigreturnSteps = 4;

// Inferior memory for the emulator: words through the host, our int3s hidden.
class HostMemory final : public arch::x86::BranchMemory {
 public:
  explicit HostMemory(CollectorHost& host) : host_(host) {}
  base::Result<std::uint64_t> read_word(std::uint64_t addr, std::size_t size) override {
    if (size > sizeof(std::uint64_t)) {
      return base::make_error(base::Errc::invalid, "no word of " + std::to_string(size) + " bytes");
    }
    auto bytes = host_.read_code(addr, size);
    if (!bytes) {
      return std::move(bytes).error();
    }
    if (bytes->size() != size) {
      return base::make_error(base::Errc::system, "short read");
    }
    std::uint64_t value = 0;
    std::memcpy(&value, bytes->data(), size);  // (little-endian)
    return value;
  }
  base::Result<void> write_word(std::uint64_t addr, std::uint64_t value, std::size_t size) override {
    if (size > sizeof value) {
      return base::make_error(base::Errc::invalid, "no word of " + std::to_string(size) + " bytes");
    }
    Bytes bytes(size);
    std::memcpy(bytes.data(), &value, size);
    return host_.write_memory(addr, bytes);
  }
  // A return address (a word of the thread's instruction set) on the stack at sp.
  base::Result<std::uint64_t> return_address(std::uint64_t sp) {
    return read_word(sp, arch::x86::register_roles(host_.isa()).word_bytes);
  }

 private:
  CollectorHost& host_;
};

}  // namespace

base::Result<std::unique_ptr<BranchTracer>> SoftEmulateCollector::make(Tid /*tid*/, const BtraceConfig& config) {
  return std::unique_ptr<BranchTracer>(std::make_unique<SoftStepTracer>(config, std::string(backend())));
}

base::Result<std::unique_ptr<Collector>> make_soft_emulate_collector(const CollectorRequest& request) {
  return std::unique_ptr<Collector>(std::make_unique<SoftEmulateCollector>(request.scope));
}

void SoftEmulateCollector::stop(Tid tid) {
  runs_.erase(tid);
  outside_.erase(tid);
  SoftStepCollector::stop(tid);
}

void SoftEmulateCollector::thread_exited(Tid tid) {
  runs_.erase(tid);
  outside_.erase(tid);
  SoftStepCollector::thread_exited(tid);
}

void SoftEmulateCollector::code_changed() {
  SoftStepCollector::code_changed();
  code_.clear();
  scope_.clear();
}

void SoftEmulateCollector::leave_scope(Tid tid, SoftStepTracer& s, const Run& r, Addr target,
                                       const arch::x86::Gprs& gpr, CollectorHost& host) {
  const Addr sp = gpr[arch::x86::kRsp];
  Outside o{target, 0, sp};
  // Whoever it went to returns through the last call performed in scope, while that call's
  // return address is still on the stack at or above sp: the call itself, a jump through the
  // PLT (which pushes more first), a tail call. A return leaves the frame: no return point.
  HostMemory memory(host);
  if (r.call_return != 0 && r.call_sp >= sp) {
    if (auto word = memory.return_address(r.call_sp); word && *word == r.call_return) {
      if (auto planted = host.plant(r.call_return, r.call_return, {}); planted && *planted != Planted::Stale) {
        o.return_to = r.call_return;
        o.sp = r.call_sp;
      }
    }
  }
  s.set_recording(false);
  outside_[tid] = o;
}

bool SoftEmulateCollector::come_back(Tid tid, SoftStepTracer& s, Addr pc, Addr sp) {
  auto it = outside_.find(tid);
  const Outside o = it->second;
  if (o.return_to != 0 && pc == o.return_to && sp > o.sp) {
    s.came_back(o.entered, pc);
  } else if (o.return_to == 0 || sp > o.sp) {
    s.set_recording(true);
    s.lost_track(pc);  // back by a way we did not watch (a return, an unwind, longjmp)
  } else {
    return false;  // deeper than where it left: code out of scope calling back into scope
  }
  outside_.erase(it);
  return true;
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
  if (!scope_.everything()) {
    const bool in = scope_.contains(pc, host);
    auto gpr = host.registers(tid);
    const Addr sp = gpr ? (*gpr)[arch::x86::kRsp] : 0;
    if (!in && outside_.count(tid) == 0) {
      // Out of scope with no branch of ours to say how (recording began there, a step of
      // GDB's went there).
      s->set_recording(false);
      outside_[tid] = Outside{pc, 0, sp};
    }
    if (auto o = outside_.find(tid); o != outside_.end()) {
      if (in && !come_back(tid, *s, pc, sp)) {
        return false;  // a callback: natively, unrecorded
      }
      if (!in && o->second.return_to != 0) {
        return false;  // natively until its return traps
      }
      // (no return point known: emulated as usual but unrecorded, until it is back)
    }
  }
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
    scope_.clear();
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
  SoftStepTracer* s = stepper(tid);
  auto gpr = host.registers(tid);
  bool back = false;  // it came back into scope right here
  if (s != nullptr && gpr && outside_.count(tid) != 0 && scope_.contains(addr, host)) {
    back = come_back(tid, *s, addr, (*gpr)[arch::x86::kRsp]);
  }
  const auto& branch = code_.branch_at(addr, host);
  if (!branch || !gpr) {
    return SiteVerdict::StepOver;  // (a return point that is no branch: the CPU runs it)
  }
  HostMemory memory(host);
  auto out = arch::x86::emulate_branch(*branch, addr, *gpr, memory);
  if (!out || !host.set_registers(tid, *gpr)) {
    return SiteVerdict::StepOver;  // a target or stack it cannot reach: the CPU faults on it
  }
  if (s != nullptr) {
    Run& r = runs_[tid];
    if (trapped && !back && s->recording() && (!r.native || addr != r.stop)) {
      s->lost_track(addr);  // it reached this int3 by a path we did not plan
    }
    r.native = false;
    s->performed(addr, out->next, branch->length);
    if (s->recording() && !scope_.everything()) {
      if (branch->kind == arch::x86::BranchKind::Call) {
        r.call_return = addr + branch->length;
        r.call_sp = (*gpr)[arch::x86::kRsp];
      }
      if (!scope_.contains(out->next, host)) {
        leave_scope(tid, *s, r, out->next, *gpr, host);
      }
    }
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
  if (auto restorer = memory.return_address((*gpr)[arch::x86::kRsp])) {
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
