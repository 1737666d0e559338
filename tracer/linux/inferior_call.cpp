#include "tracer/linux/inferior_call.hpp"

#include <sys/ptrace.h>
#include <sys/wait.h>

#include <algorithm>
#include <csignal>
#include <thread>

#include "arch/x86/register_layout.hpp"
#include "base/log.hpp"

namespace tracer {
namespace {

using arch::x86::RawRegisters;
namespace gpr = arch::x86;

constexpr std::uint64_t kRedZone = 128;
constexpr std::uint64_t kReturnAddress = 0;  // the call's return faults there: that is its end
constexpr std::uint64_t kDirectionFlag = 1u << 10;
constexpr std::uint64_t kTrapFlag = 1u << 8;
constexpr int kArgRegisters[] = {gpr::kRdi, gpr::kRsi, gpr::kRdx, gpr::kRcx, gpr::kR8, gpr::kR9};

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
  r[gpr::kEflags] &= ~(kDirectionFlag | kTrapFlag);
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

}  // namespace

CallOutcome call_function(Kernel& kernel, Pid pid, Tid tid, const InferiorCall& call) {
  CallOutcome outcome;
  RawRegisters saved;
  if (auto r = kernel.read_gprs(tid, saved); !r) {
    outcome.result = r.error();
    return outcome;
  }
  if (auto r = kernel.read_xstate(tid, saved); !r) {
    outcome.result = r.error();
    return outcome;
  }
  auto siginfo = kernel.get_siginfo(tid);  // none in an event stop: nothing to restore then
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
