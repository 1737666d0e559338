// A thread stopped in an interrupted system call: the kernel's "restart me" results
// (include/linux/errno.h) in rax, the call's number in orig_rax. At its resume the kernel restarts
// the call (rip back over the 2-byte syscall instruction) or makes it fail with EINTR, as the
// signal that interrupted it asks.
#pragma once

#include "arch/x86/raw_registers.hpp"

namespace tracer {

bool interrupted_syscall(const arch::x86::RawRegisters& regs);

// Does for a thread about to be moved what the kernel would do at a resume with no handler to
// run: the call is set to run again (rip back on the syscall instruction), and orig_rax = -1
// keeps the kernel from doing it a second time.
void restart_syscall_here(arch::x86::RawRegisters& regs);

}  // namespace tracer
