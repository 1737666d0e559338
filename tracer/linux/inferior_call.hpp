// Calling a function of the program on one of its stopped threads, for the server's own needs
// (bringing the branch recorder into a running process: a call to its libc's dlopen), as GDB's
// `call` does but without touching the program's code: the call returns to address 0, and the
// fault there is how the server knows it returned.
//
// Only the calling thread runs; the caller has every thread of the process stopped. The thread's
// registers (the extended state too) are as before the call afterwards, whatever happened, and a
// syscall the thread was stopped in restarts as it would have. A thread stopped inside a system
// call (a clone, fork, exec or vfork-done event) first finishes it, its result kept: a call from
// there would take the result's place. Signals that came for it during the call are not delivered
// then: the outcome lists them, and the caller sends them again.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/result.hpp"
#include "tracer/linux/kernel.hpp"
#include "tracer/types.hpp"

namespace tracer {

// An integer argument: a value, or the address of a byte of the call's stack data.
struct CallArg {
  std::uint64_t value = 0;
  bool in_stack_data = false;  // value is an offset into InferiorCall::stack_data

  static CallArg of(std::uint64_t v) { return {v, false}; }
  static CallArg data_at(std::uint64_t offset) { return {offset, true}; }
};

struct InferiorCall {
  Addr function = 0;
  std::vector<CallArg> args;  // up to 6: rdi, rsi, rdx, rcx, r8, r9
  Bytes stack_data;           // copied to the thread's stack, below its red zone, for the call
  std::chrono::milliseconds limit{5000};  // a call that has not returned by then is abandoned
};

struct CallOutcome {
  // rax, or why there is none: the function faulted (Errc::failed) or did not return within
  // the limit (Errc::timed_out), and the thread's registers were restored all the same (what
  // the function did to memory stays); or the thread or process ended.
  base::Result<std::uint64_t> result = std::uint64_t{0};
  std::vector<int> held_signals;  // came for the thread during the call, not delivered
};

// Why no call may run on stopped `tid` now, or nothing. It stands in a system call that cannot
// finish yet (a vfork waiting for its child, an exit, a syscall stop), or in one that waits under
// a signal mask of its own (sigsuspend, ppoll, pselect, epoll_pwait): resumed for a call, the
// kernel would put the program's mask back before its handler ran.
std::optional<std::string> call_refused(Kernel& kernel, Tid tid);

// Runs `call` on `tid` of `pid` and stops it again where it was (Errc::not_yet where
// call_refused says why not). The core's int3s must be out of the way: a trap on one ends the
// call half done (a dlopen holding the loader's lock).
CallOutcome call_function(Kernel& kernel, Pid pid, Tid tid, const InferiorCall& call);

}  // namespace tracer
