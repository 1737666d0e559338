#include "tracer/linux/inferior_call.hpp"

#include <sys/ptrace.h>
#include <sys/wait.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <thread>

#include "arch/x86/register_layout.hpp"
#include "base/log.hpp"
#include "tracer/linux/syscall_restart.hpp"

namespace tracer {
namespace {

using arch::x86::RawRegisters;
namespace gpr = arch::x86;

constexpr std::uint64_t kRedZone = 128;
constexpr std::uint64_t kReturnAddress = 0;  // the call's return faults there: that is its end
constexpr int kArgRegisters[] = {gpr::kRdi, gpr::kRsi, gpr::kRdx, gpr::kRcx, gpr::kR8, gpr::kR9};

constexpr std::uint64_t kCs32 = 0x23;  // the code segment of a 32-bit program

// The system calls that wait under a mask of their own and put the program's back only once a
// handler has run, or at the next return to the program (x86-64 and i386 numbers).
bool waits_under_own_mask(std::int64_t nr, bool i386) {
  // rt_sigsuspend, pselect6, ppoll, epoll_pwait, io_pgetevents, epoll_pwait2; i386 adds
  // sigsuspend and the _time64 forms.
  static constexpr std::int64_t k64[] = {130, 270, 271, 281, 333, 441};
  static constexpr std::int64_t k32[] = {72, 179, 308, 309, 319, 385, 413, 414, 416, 441};
  return i386 ? std::find(std::begin(k32), std::end(k32), nr) != std::end(k32)
              : std::find(std::begin(k64), std::end(k64), nr) != std::end(k64);
}

// Stopped inside a system call (rax holds -ENOSYS until the call returns), at an event after
// which it can go on to its end (its result is known once it has), or at one where it cannot.
enum class InsideSyscall { no, finishes, cannot_finish };

InsideSyscall inside_syscall(const RawRegisters& regs, const base::Result<siginfo_t>& si) {
  if (static_cast<std::int64_t>(regs.gpr[gpr::kOrigRax]) < 0 ||
      static_cast<std::int64_t>(regs.gpr[gpr::kRax]) != -ENOSYS) {
    return InsideSyscall::no;
  }
  const int event = si && si->si_signo == SIGTRAP ? si->si_code >> 8 : 0;
  switch (event) {
    case PTRACE_EVENT_CLONE:
    case PTRACE_EVENT_FORK:
    case PTRACE_EVENT_EXEC:
    case PTRACE_EVENT_VFORK_DONE: return InsideSyscall::finishes;
    default: return InsideSyscall::cannot_finish;  // (vfork, exit, a syscall stop)
  }
}

// call_refused's answer for a thread stopped with these registers.
std::optional<std::string> refusal(const RawRegisters& regs, InsideSyscall inside) {
  if (inside == InsideSyscall::cannot_finish) {
    return "stopped inside a system call that cannot go on to its end now (a vfork waiting for its child, "
           "an exit)";
  }
  if (interrupted_syscall(regs) &&
      waits_under_own_mask(static_cast<std::int64_t>(regs.gpr[gpr::kOrigRax]), regs.gpr[gpr::kCs] == kCs32)) {
    return "stopped in a system call that waits under its own signal mask (sigsuspend, ppoll, pselect): "
           "a call would put the program's mask back before its handler ran";
  }
  return std::nullopt;
}

Bytes le64(std::uint64_t v) {
  Bytes out(8);
  for (int i = 0; i < 8; ++i) {
    out[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(v >> (8 * i));
  }
  return out;
}

// The thread's registers for the call: its own, with the frame below its red zone (the stack
// data, 16-byte aligned, then the return address, as a `call` would leave it).
struct Frame {
  RawRegisters regs;
  Addr return_slot = 0;
};

base::Result<Frame> build_frame(RawMemory& memory, const RawRegisters& saved, const InferiorCall& call) {
  if (call.args.size() > std::size(kArgRegisters)) {
    return base::Error{base::Errc::invalid, 0, "an inferior call takes at most 6 arguments"};
  }
  const Addr sp = saved.gpr[gpr::kRsp];
  const Addr data = (sp - kRedZone - call.stack_data.size()) & ~Addr{15};
  Frame frame{saved, data - 8};
  if (!call.stack_data.empty()) {
    if (auto w = memory.write(data, call.stack_data); !w) {
      return w.error();
    }
  }
  if (auto w = memory.write(frame.return_slot, le64(kReturnAddress)); !w) {
    return w.error();
  }
  auto& r = frame.regs.gpr;
  for (std::size_t i = 0; i < call.args.size(); ++i) {
    const CallArg& a = call.args[i];
    r[kArgRegisters[i]] = a.in_stack_data ? data + a.value : a.value;
  }
  r[gpr::kRip] = call.function;
  r[gpr::kRsp] = frame.return_slot;
  r[gpr::kRax] = 0;                              // no vector registers used by a variadic callee
  r[gpr::kOrigRax] = static_cast<std::uint64_t>(-1);  // no syscall restart into the call
  r[gpr::kEflags] &= ~(gpr::kEflagsDirection | gpr::kEflagsTrap);
  return frame;
}

// The next status of tid; at `deadline` the thread is stopped with SIGSTOP (timed_out set).
base::Result<int> next_status(Kernel& kernel, Pid pid, Tid tid, std::chrono::steady_clock::time_point deadline,
                              bool& timed_out) {
  auto pause = std::chrono::microseconds(50);
  for (;;) {
    auto polled = kernel.poll_for(tid);
    if (!polled) {
      return polled.error();
    }
    if (*polled) {
      return **polled;
    }
    if (!timed_out && std::chrono::steady_clock::now() >= deadline) {
      timed_out = true;
      if (auto k = kernel.tgkill(pid, tid, SIGSTOP); !k) {
        return k.error();
      }
      return kernel.wait_for(tid);
    }
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::microseconds(5000));
  }
}

// Runs the prepared thread to the call's end. Its result, or why there is none.
base::Result<std::uint64_t> run_call(Kernel& kernel, Pid pid, Tid tid, const InferiorCall& call,
                                     const Frame& frame, std::vector<int>& held) {
  const auto deadline = std::chrono::steady_clock::now() + call.limit;
  bool timed_out = false;
  for (;;) {
    if (auto r = kernel.resume(tid, false, 0); !r) {
      return r.error();
    }
    auto status = next_status(kernel, pid, tid, deadline, timed_out);
    if (!status) {
      return status.error();
    }
    const int st = *status;
    if (WIFEXITED(st) || WIFSIGNALED(st)) {
      return base::Error{base::Errc::no_process, 0, "the process ended during the call"};
    }
    if (!WIFSTOPPED(st)) {
      continue;
    }
    const int sig = WSTOPSIG(st);
    if ((st >> 16) == PTRACE_EVENT_EXIT) {
      return base::Error{base::Errc::no_thread, 0, "the thread exited during the call"};
    }
    if ((st >> 16) != 0) {
      continue;  // a clone or fork the function made: the new task stops on its own
    }
    if (sig == SIGSEGV) {
      RawRegisters now;
      if (auto r = kernel.read_gprs(tid, now); !r) {
        return r.error();
      }
      if (now.gpr[gpr::kRip] == kReturnAddress && now.gpr[gpr::kRsp] == frame.return_slot + 8) {
        return now.gpr[gpr::kRax];
      }
      return base::Error{base::Errc::failed, 0,
                         fmt::format("the called function faulted (SIGSEGV at {:#x})", now.gpr[gpr::kRip])};
    }
    if (sig == SIGSTOP && timed_out) {
      return base::Error{base::Errc::timed_out, 0,
                         fmt::format("the called function did not return within {} ms", call.limit.count())};
    }
    if (sig == SIGILL || sig == SIGBUS || sig == SIGFPE || sig == SIGTRAP) {
      return base::Error{base::Errc::failed, 0, fmt::format("the called function stopped with signal {}", sig)};
    }
    held.push_back(sig);  // resumed without it; the caller sends it again
  }
}

// Runs the rest of the system call tid is stopped in; its result in the registers.
base::Result<void> finish_syscall(Kernel& kernel, Pid pid, Tid tid, RawRegisters& regs,
                                  std::vector<int>& held) {
  Frame to_end{regs, regs.gpr[gpr::kRsp] - 8};  // (its return lands on the call's own end)
  to_end.regs.gpr[gpr::kRip] = kReturnAddress;
  if (auto w = kernel.write_registers(tid, to_end.regs, false); !w) {
    return w;
  }
  auto result = run_call(kernel, pid, tid, InferiorCall{}, to_end, held);
  if (!result) {
    return result.error();
  }
  regs.gpr[gpr::kRax] = *result;
  regs.gpr[gpr::kOrigRax] = static_cast<std::uint64_t>(-1);  // (done: nothing to restart)
  return base::success();
}

}  // namespace

std::optional<std::string> call_refused(Kernel& kernel, Tid tid) {
  RawRegisters regs;
  if (!kernel.read_gprs(tid, regs)) {
    return std::nullopt;  // (the call says why)
  }
  return refusal(regs, inside_syscall(regs, kernel.get_siginfo(tid)));
}

CallOutcome call_function(Kernel& kernel, Pid pid, Tid tid, const InferiorCall& call) {
  CallOutcome outcome;
  RawRegisters saved;
  if (auto r = kernel.read_gprs(tid, saved); !r) {
    outcome.result = r.error();
    return outcome;
  }
  auto siginfo = kernel.get_siginfo(tid);
  const InsideSyscall inside = inside_syscall(saved, siginfo);
  if (auto why = refusal(saved, inside)) {
    outcome.result = base::Error{base::Errc::not_yet, 0, *why};
    return outcome;
  }
  if (auto r = kernel.read_xstate(tid, saved); !r) {
    outcome.result = r.error();
    return outcome;
  }
  if (inside == InsideSyscall::finishes) {
    if (auto done = finish_syscall(kernel, pid, tid, saved, outcome.held_signals); !done) {
      (void)kernel.write_registers(tid, saved, true);
      outcome.result = done.error();
      return outcome;
    }
  }
  auto memory = kernel.memory(pid);
  if (!memory) {
    outcome.result = memory.error();
    return outcome;
  }
  auto frame = build_frame(**memory, saved, call);
  if (!frame) {
    outcome.result = frame.error();
    return outcome;
  }
  if (auto w = kernel.write_registers(tid, frame->regs, false); !w) {
    outcome.result = w.error();
    return outcome;
  }
  outcome.result = run_call(kernel, pid, tid, call, *frame, outcome.held_signals);
  // Whatever happened, the thread is stopped (or gone): its own registers back.
  auto restored = kernel.write_registers(tid, saved, true);
  if (siginfo) {
    (void)kernel.set_siginfo(tid, *siginfo);
  }
  base::logf(base::LogCat::ptrace, "inferior call {:#x} on {}: {}", call.function, tid,
             outcome.result ? fmt::format("returned {:#x}", *outcome.result) : outcome.result.error().message());
  if (outcome.result && !restored) {
    outcome.result = restored.error();
  }
  return outcome;
}

}  // namespace tracer
