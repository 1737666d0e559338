// Whether the server may run anything of its own on a stopped thread of the program (a system
// call or a call of the recorder's, remote_syscalls.hpp): not inside a system call that cannot
// go on to its end now, nor in one that waits under a signal mask of its own.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "arch/x86/raw_registers.hpp"
#include "base/result.hpp"
#include "tracer/linux/kernel.hpp"
#include "tracer/types.hpp"

namespace tracer {

// Why no call may run on stopped `tid` now, or nothing. It stands in a system call that cannot
// finish yet (a vfork waiting for its child, an exit, a syscall stop), or in one that waits under
// a signal mask of its own (sigsuspend, ppoll, pselect, epoll_pwait): resumed for a call, the
// kernel would put the program's mask back before its handler ran.
std::optional<std::string> call_refused(Kernel& kernel, Tid tid);
// The same from the thread's registers and siginfo, read already.
std::optional<std::string> call_refused(const arch::x86::RawRegisters& regs, const base::Result<siginfo_t>& siginfo);
// Stopped in a system call that waits under a mask of its own (interrupted, the program's mask
// kept aside by the kernel until a handler has run or the call returns): a mask set by ptrace
// now would make the kernel forget the program's.
bool in_wait_under_own_mask(const arch::x86::RawRegisters& regs);

}  // namespace tracer
