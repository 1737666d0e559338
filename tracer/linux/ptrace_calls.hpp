// Thin, logged wrappers over the ptrace requests the target makes, so --debug shows each one.
// The core reaches them through its Kernel (kernel.hpp); launch.cpp calls them directly.
#pragma once

#include <csignal>
#include <cstdint>

#include "base/result.hpp"
#include "tracer/linux/kernel.hpp"
#include "tracer/types.hpp"

namespace tracer::pt {

// PTRACE_CONT or PTRACE_SINGLESTEP, delivering sig (0: none).
base::Result<void> resume(Tid tid, bool step, int sig);
// PTRACE_SYSCALL: runs to the next syscall entry or exit (or signal, or event).
base::Result<void> resume_to_syscall(Tid tid, int sig);
// Where a thread in a syscall stop (SIGTRAP | 0x80) is: PTRACE_GET_SYSCALL_INFO for entry or
// exit, orig_rax for the number (the exit report does not carry it).
base::Result<SyscallStop> syscall_stop(Tid tid);
base::Result<void> set_options(Tid tid, long options);
base::Result<void> attach(Tid tid);
base::Result<void> detach(Tid tid, int sig);
base::Result<unsigned long> event_message(Tid tid);
base::Result<siginfo_t> get_siginfo(Tid tid);
base::Result<void> set_siginfo(Tid tid, const siginfo_t& si);
// PTRACE_GETSIGMASK / PTRACE_SETSIGMASK (bit n-1: signal n blocked).
base::Result<std::uint64_t> signal_mask(Tid tid);
base::Result<void> set_signal_mask(Tid tid, std::uint64_t mask);
// PTRACE_GET_THREAD_AREA: the base address of GDT entry `entry` of a 32-bit thread (its TLS
// segment: gs >> 3).
base::Result<Addr> thread_area_base(Tid tid, int entry);
// PTRACE_GET_RSEQ_CONFIGURATION: the thread's registered rseq area (0: none) and signature.
base::Result<RseqArea> rseq_area(Tid tid);
// tgkill(pid, tid, sig).
base::Result<void> tgkill(Pid pid, Tid tid, int sig);
// rt_tgsigqueueinfo(pid, tid, si.si_signo, &si).
base::Result<void> tgsigqueueinfo(Pid pid, Tid tid, const siginfo_t& si);
// "stopped SIGTRAP event 3", "exited 0", ... for logs.
const char* describe_signal(int sig);

}  // namespace tracer::pt
