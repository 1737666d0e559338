// SoftStep in LinuxTarget: a traced thread that GDB lets run is single-stepped instead, and
// every step's taken branch goes into its history (btrace.md §10). Breakpoints, watchpoints,
// signals, exits and interrupts end the run exactly as they would without tracing: the step
// that lands on one of our int3s reports it before the int3 ever runs.
#include <poll.h>
#include <sys/ptrace.h>

#include <csignal>
#include <ctime>

#include "base/log.hpp"
#include "tracer/linux/linux_target.hpp"
#include "tracer/linux/ptrace_calls.hpp"

namespace tracer {
namespace {


// poll() keeps waiting for the steps of traced threads this long before it hands control
// back to the server (which then sees GDB's packets, 0x03 included).
constexpr std::uint64_t kStepBudgetNs = 25'000'000;

std::uint64_t now_ns() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000u + static_cast<std::uint64_t>(ts.tv_nsec);
}

// The trap a step of ours produces: TRAP_TRACE, or TRAP_BRKPT at the end of a system call.
bool is_step_trap(int si_code) {
  return si_code == TRAP_TRACE || si_code == TRAP_BRKPT;
}

}  // namespace

const arch::x86::InstructionInfo* LinuxTarget::decode_at(Addr pc) {
  if (const auto* hit = insn_cache_.find(pc)) {
    return hit;
  }
  auto bytes = memory_.read(pc, 15);
  if (!bytes) {
    return nullptr;
  }
  breakpoints_.hide(pc, *bytes);  // the instruction under our int3, never the int3
  auto info = arch::x86::decode_instruction(*bytes);
  if (!info) {
    return nullptr;
  }
  return &insn_cache_.insert(pc, *info);
}

// run_thread() hook: a traced thread always steps. Notes where the step starts.
bool LinuxTarget::soft_step_begin(Thread& t, int sig) {
  SoftStepTracer* s = soft_stepper(t.tid);
  if (s == nullptr) {
    return false;
  }
  auto pc = s->take_next_pc();
  if (!pc) {
    auto now = pt::get_pc(t.tid);
    if (!now) {
      return true;  // gone: the resume fails or its exit arrives
    }
    pc = *now;
  }
  s->begin_step(*pc, sig);
  return true;
}

// What the finished step did, into the ring. False when the trap was not our step's (the
// program's own int3, a SIGTRAP sent to it): then it is classified as without tracing.
bool LinuxTarget::soft_step_record(Thread& t, SoftStepTracer& s, Addr to) {
  const Addr from = s.from();
  if (s.step_signal() != 0) {
    // Delivering a handled signal stops at the handler's entry (si_code SIGTRAP).
    if (auto si = pt::get_siginfo(t.tid); si && si->si_code == SIGTRAP) {
      s.entered_handler(to);
      return true;
    }
  }
  const arch::x86::InstructionInfo* insn = decode_at(from);
  if (insn == nullptr) {
    if (to != from) {
      s.stepped(arch::x86::InstructionInfo{0, arch::x86::InsnKind::Branch}, to);  // a block edge
    }
    return true;
  }
  const bool trap_insn = insn->kind == arch::x86::InsnKind::Trap;
  if (trap_insn || (to == from && insn->kind != arch::x86::InsnKind::RepString)) {
    auto si = pt::get_siginfo(t.tid);
    if (si && !is_step_trap(si->si_code)) {
      if (trap_insn && to != from) {
        s.stepped(*insn, to);  // int3 / int n ran, then trapped
      }
      return false;
    }
  }
  s.stepped(*insn, to);
  return true;
}

// classify_trap() hook for traced threads.
LinuxTarget::StepOutcome LinuxTarget::soft_step_trap(Thread& t) {
  StepOutcome out;
  SoftStepTracer* s = soft_stepper(t.tid);
  if (s == nullptr) {
    return out;
  }
  auto pc = pt::get_pc(t.tid);
  if (!pc) {
    out.kind = StepOutcome::Kind::Classify;
    return out;
  }
  const Addr from = s->from();
  const Addr to = *pc;
  // The step ran into our int3 at its start (a second breakpoint right after a step-over):
  // the int3 ran, not the program. Report it as a plain run would.
  if (to == from + 1 && breakpoints_.contains(from) && s->step_signal() == 0) {
    (void)pt::set_pc(t.tid, from);
    out.kind = StepOutcome::Kind::Report;
    out.event = StopEvent{StopReason::SoftwareBreakpoint, pid_, t.tid, SIGTRAP};
    return out;
  }
  DebugTrap hw;
  if (t.dr.dr7 != 0) {
    hw = debug_trap(t);
  }
  if (!soft_step_record(t, *s, to)) {
    out.kind = StepOutcome::Kind::Classify;
    return out;
  }
  if (hw.kind == DebugTrap::Kind::Report) {
    out.kind = StepOutcome::Kind::Report;
    out.event = hw.event;
    return out;
  }
  const ThreadAction& a = t.action;
  bool go_on = false;
  if (a.kind == ResumeKind::Continue) {
    if (breakpoints_.contains(to)) {
      out.kind = StepOutcome::Kind::Report;
      out.event = StopEvent{StopReason::SoftwareBreakpoint, pid_, t.tid, SIGTRAP};
      return out;
    }
    go_on = true;
  } else if (a.kind == ResumeKind::RangeStep) {
    go_on = a.range_start <= to && to < a.range_end && !breakpoints_.contains(to);
  }
  if (!go_on) {
    out.kind = StepOutcome::Kind::Report;
    out.event = StopEvent{StopReason::SingleStep, pid_, t.tid, SIGTRAP};
    return out;
  }
  out.kind = StepOutcome::Kind::Continue;
  if (running_ && !stopping_ && t.resumed && !t.pending) {
    s->set_next_pc(to);
    continue_internally(t);
  }
  return out;
}

// finish_step_over() hook: the instruction under our int3 ran with one step; record it.
void LinuxTarget::soft_step_after_step_over(Thread& t) {
  SoftStepTracer* s = soft_stepper(t.tid);
  if (s == nullptr) {
    return;
  }
  if (auto pc = pt::get_pc(t.tid)) {
    (void)soft_step_record(t, *s, *pc);
  }
}

// poll() hook: while traced threads step and nothing is to be reported, wait for their next
// events here rather than going back to the server for each step. deadline_ns 0: not set yet.
bool LinuxTarget::soft_step_wait(std::uint64_t& deadline_ns) {
  if (btrace_.empty() || !running_ || stopping_ || exit_event_ || interrupt_requested_) {
    return false;
  }
  bool stepping = false;
  for (const auto& [tid, t] : threads_) {
    if (t.resumed && t.pending) {
      return false;
    }
    stepping = stepping || (!t.stopped && soft_stepper(tid) != nullptr);
  }
  if (!stepping) {
    return false;
  }
  const std::uint64_t now = now_ns();
  if (deadline_ns == 0) {
    deadline_ns = now + kStepBudgetNs;
  }
  if (now >= deadline_ns) {
    return false;
  }
  const std::uint64_t left = deadline_ns - now;
  timespec ts{static_cast<time_t>(left / 1'000'000'000u), static_cast<long>(left % 1'000'000'000u)};
  pollfd pfd{sfd_, POLLIN, 0};
  (void)::ppoll(&pfd, 1, &ts, nullptr);
  return true;
}

}  // namespace tracer
