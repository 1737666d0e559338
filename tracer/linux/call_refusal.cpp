#include "tracer/linux/call_refusal.hpp"

#include <sys/ptrace.h>
#include <sys/wait.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <thread>

#include "arch/x86/register_layout.hpp"
#include "base/log.hpp"
#include "tracer/linux/remote_syscalls.hpp"
#include "tracer/linux/syscall_restart.hpp"

namespace tracer {
namespace {

using arch::x86::RawRegisters;
namespace gpr = arch::x86;

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
  if (in_wait_under_own_mask(regs)) {
    return "stopped in a system call that waits under its own signal mask (sigsuspend, ppoll, pselect): "
           "a call would put the program's mask back before its handler ran";
  }
  return std::nullopt;
}

}  // namespace

bool in_wait_under_own_mask(const RawRegisters& regs) {
  return interrupted_syscall(regs) &&
         waits_under_own_mask(static_cast<std::int64_t>(regs.gpr[gpr::kOrigRax]), regs.gpr[gpr::kCs] == kCs32);
}

std::optional<std::string> call_refused(Kernel& kernel, Tid tid) {
  RawRegisters regs;
  if (!kernel.read_gprs(tid, regs)) {
    return std::nullopt;  // (the call says why)
  }
  return call_refused(regs, kernel.get_siginfo(tid));
}

std::optional<std::string> call_refused(const RawRegisters& regs, const base::Result<siginfo_t>& siginfo) {
  return refusal(regs, inside_syscall(regs, siginfo));
}

}  // namespace tracer
