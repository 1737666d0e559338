// Range stepping at full speed: where the rest of a thread's range is straight-line code, the
// thread runs to a temporary int3 at the range's end (or at the first branch inside it, which
// is then stepped) instead of stopping after every instruction. gdbserver single-steps each.
//
// Only a thread that is alone in its address space's running (no other thread running or about
// to, no vfork child sharing the memory), in all-stop, runs this way, so nothing else meets the
// int3; should one still, it is stepped over unseen.
#include <algorithm>

#include "arch/x86/branch_emulation.hpp"
#include "arch/x86/instruction_length.hpp"
#include "arch/x86/straight_line.hpp"
#include "base/log.hpp"
#include "tracer/linux/linux_target.hpp"

namespace tracer {
namespace {

// Straight-line code is looked for this far ahead (a line longer than this runs in pieces).
constexpr std::size_t kRangeLookahead = 4096;

bool runs_alone(const std::map<Pid, std::unique_ptr<Process>>& processes, const Process& p, Tid tid) {
  for (const auto& [other, o] : p.threads) {
    // (Running, or about to: GDB's resume reaches the threads one at a time.)
    if (other != tid && o.state() != ThreadState::Zombie && (o.running() || (o.gdb.resumed() && !PendingEvents::has_stop(o)))) {
      return false;
    }
  }
  return std::none_of(processes.begin(), processes.end(),
                      [&](const auto& entry) { return entry.second->vfork_parent == p.pid; });
}

// Jumps and conditional branches touch no memory: performed on the registers alone.
class NoBranchMemory final : public arch::x86::BranchMemory {
 public:
  base::Result<std::uint64_t> read_word(std::uint64_t, std::size_t) override {
    return base::make_error(base::Errc::unsupported, "not performed here");
  }
  base::Result<void> write_word(std::uint64_t, std::uint64_t, std::size_t) override {
    return base::make_error(base::Errc::unsupported, "not performed here");
  }
};

}  // namespace

// The branch that ended the straight-line run, performed in place of a step when it is one
// that reads and writes no memory (jcc, jmp to a relative or register target, loop, jrcxz);
// where the thread goes, or nothing (then it is stepped).
std::optional<Addr> LinuxTarget::perform_range_branch(Process& p, LinuxThread& t, Addr addr) {
  using arch::x86::BranchKind;
  const ThreadAction& a = t.gdb.action();
  if (addr < a.range_start || addr >= a.range_end) {
    return std::nullopt;  // the range's end: nothing to perform
  }
  auto code = p.code.read(addr, arch::x86::kMaxInstructionLength);
  if (!code) {
    return std::nullopt;
  }
  auto branch = arch::x86::decode_branch(*code, p.isa);
  if (!branch || branch->kind == BranchKind::Call || branch->kind == BranchKind::Ret ||
      branch->target == arch::x86::TargetKind::Memory) {
    return std::nullopt;
  }
  auto raw = t.regs.gprs(t.tid);
  if (!raw) {
    return std::nullopt;
  }
  RawRegisters regs = **raw;
  NoBranchMemory no_memory;
  auto outcome = arch::x86::emulate_branch(*branch, addr, regs.gpr, no_memory);
  if (!outcome || !t.regs.store(t.tid, regs, false)) {
    return std::nullopt;
  }
  t.stop_pc = outcome->next;
  base::logf(base::LogCat::ptrace, "thread {}: performed the branch at {:#x} of its range: to {:#x}", t.tid,
             addr, outcome->next);
  return outcome->next;
}

bool LinuxTarget::run_to_range_stop(Process& p, LinuxThread& t, int sig) {
  const ThreadAction& a = t.gdb.action();
  // (All-stop only: in non-stop GDB may resume another thread while this one runs, which
  // could meet the int3 just as this one's stop takes it out.)
  if (a.kind != ResumeKind::RangeStep || !all_stop() || sig != 0 || t.in_syscall_stop ||
      p.vfork_parent != 0 || (p.collector && p.collector->tracing(t.tid)) ||
      !runs_alone(processes_, p, t.tid)) {
    return false;
  }
  auto pc = t.regs.pc(t.tid);
  if (!pc || *pc < a.range_start || *pc >= a.range_end || p.code.contains(*pc)) {
    return false;
  }
  auto code = p.code.read(*pc, std::min<std::size_t>(a.range_end - *pc, kRangeLookahead));
  if (!code) {
    return false;
  }
  const Addr stop = *pc + arch::x86::straight_line_length(*code, p.isa);
  if (stop == *pc || p.code.contains(stop)) {
    return false;  // a branch first (stepped), or an int3 of ours is already there
  }
  if (!p.code.plant(stop, SiteOwner::Range)) {
    return false;  // (the range's end is outside any mapping: step)
  }
  t.range_stop = stop;
  ++p.range_stops;
  base::logf(base::LogCat::ptrace, "thread {}: runs {:#x}..{:#x} of its range to an int3", t.tid, *pc, stop);
  return true;
}

void LinuxTarget::drop_range_stop(Process& p, LinuxThread& t) {
  const Addr addr = std::exchange(t.range_stop, 0);
  if (addr == 0) {
    return;
  }
  --p.range_stops;
  (void)p.code.unplant(addr, SiteOwner::Range);
}

bool LinuxTarget::range_site(const Process& p, const LinuxThread& t, Addr addr) const {
  return addr != 0 && (t.range_stop == addr ||
                       (p.code.owned_by(addr, SiteOwner::Range) && !p.code.owned_by(addr, SiteOwner::Gdb)));
}

std::optional<StopEvent> LinuxTarget::trapped_on_range_site(Process& p, LinuxThread& t, Addr addr) {
  (void)t.regs.set_pc(t.tid, addr);
  t.stop_pc = addr;
  if (t.range_stop == addr) {
    drop_range_stop(p, t);
    if (auto next = perform_range_branch(p, t, addr)) {
      return end_of_step(p, t, *next);  // still inside: runs on (keep_going)
    }
    return end_of_step(p, t, addr);  // at the range's end, or on a branch to step next
  }
  // Another thread's int3 (or one left by a thread since gone): this thread never meant to
  // stop here.
  start_step_over(p, t, addr, 0);
  return std::nullopt;
}

void LinuxTarget::drop_stale_range_stops(Process& p) {
  // A thread stopped before its int3 (another thread's event was reported meanwhile) plans
  // again when it runs. Its int3 goes before any thread of the process runs again: one that
  // met it after we took it out would trap on a byte no longer ours.
  for (auto it = p.threads.begin(); p.range_stops > 0 && it != p.threads.end(); ++it) {
    if (!it->second.running()) {
      drop_range_stop(p, it->second);
    }
  }
}

}  // namespace tracer
