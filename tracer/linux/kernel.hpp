// What the core asks of the kernel about the threads it traces, once they are traced: wait
// statuses, ptrace requests, signals, registers, debug registers, a thread's state in /proc
// and a process's memory. linux_kernel() makes the real calls; tests script a kernel of their
// own (test/tracer/scripted_kernel.hpp) and drive the core with wait statuses they make up,
// no process at all. Starting a program (launch.cpp's fork and exec) is not here: a script
// cannot stand in for it; attaching is.
#pragma once

#include <csignal>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "arch/x86/raw_registers.hpp"
#include "base/result.hpp"
#include "tracer/linux/memory.hpp"
#include "tracer/types.hpp"

namespace tracer {

struct WaitStatus {
  Tid tid = 0;
  int status = 0;
};

// Where a thread in a syscall stop (SIGTRAP | 0x80) is: entry or exit, and the syscall's number.
struct SyscallStop {
  bool entry = false;
  int number = -1;
};

// A thread's registered rseq area (rseq(2)): its address (0: none) and the signature its abort
// handlers carry.
struct RseqArea {
  Addr area = 0;
  std::uint32_t signature = 0;
};

class Kernel {
 public:
  virtual ~Kernel() = default;

  // --- wait statuses ----------------------------------------------------------------------
  // A status of any traced thread: waiting now (block false: never blocks), or the next one
  // (block: until one comes or a signal interrupts the wait). nullopt: none.
  virtual std::optional<WaitStatus> wait_any(bool block) = 0;
  // The next status of tid, waiting for it.
  virtual base::Result<int> wait_for(Tid tid) = 0;
  // A status of tid waiting now (nullopt: none yet); never blocks.
  virtual base::Result<std::optional<int>> poll_for(Tid tid) = 0;
  // A status a caller of wait_for or poll_for took and does not own (a thread's exit during the
  // server's own call in it): wait_any gives it before any other, so that it reaches the one event
  // pipeline as if it had not been taken.
  virtual void hand_back(WaitStatus status) = 0;

  // --- ptrace requests ----------------------------------------------------------------------
  virtual base::Result<void> attach(Tid tid) = 0;
  // PTRACE_CONT or PTRACE_SINGLESTEP, delivering sig (0: none).
  virtual base::Result<void> resume(Tid tid, bool step, int sig) = 0;
  // PTRACE_SYSCALL: to the next syscall entry or exit (or signal, or event).
  virtual base::Result<void> resume_to_syscall(Tid tid, int sig) = 0;
  virtual base::Result<SyscallStop> syscall_stop(Tid tid) = 0;
  virtual base::Result<void> set_options(Tid tid, long options) = 0;
  virtual base::Result<void> detach(Tid tid, int sig) = 0;
  virtual base::Result<unsigned long> event_message(Tid tid) = 0;
  virtual base::Result<siginfo_t> get_siginfo(Tid tid) = 0;
  virtual base::Result<void> set_siginfo(Tid tid, const siginfo_t& si) = 0;
  // The thread's blocked signals (PTRACE_GETSIGMASK, PTRACE_SETSIGMASK): bit n-1 for signal n.
  virtual base::Result<std::uint64_t> signal_mask(Tid tid) = 0;
  virtual base::Result<void> set_signal_mask(Tid tid, std::uint64_t mask) = 0;
  // DR0-DR7 (u_debugreg[i]).
  virtual base::Result<std::uint64_t> get_debugreg(Tid tid, int i) = 0;
  virtual base::Result<void> set_debugreg(Tid tid, int i, std::uint64_t value) = 0;
  // The base of GDT entry `entry` of a 32-bit thread (PTRACE_GET_THREAD_AREA): its TLS.
  virtual base::Result<Addr> thread_area_base(Tid tid, int entry) = 0;
  // Its registered rseq area and signature (PTRACE_GET_RSEQ_CONFIGURATION).
  virtual base::Result<RseqArea> rseq_area(Tid tid) = 0;
  // The general registers (PTRACE_GETREGS) into raw.gpr; the XSAVE area into raw.xsave.
  virtual base::Result<void> read_gprs(Tid tid, arch::x86::RawRegisters& raw) = 0;
  virtual base::Result<void> read_xstate(Tid tid, arch::x86::RawRegisters& raw) = 0;
  // The general registers always, the XSAVE area only if xstate_changed.
  virtual base::Result<void> write_registers(Tid tid, const arch::x86::RawRegisters& raw, bool xstate_changed) = 0;

  // --- signals, /proc, memory -------------------------------------------------------------
  // tgkill(pid, tid, sig); sig 0 asks whether the thread exists.
  virtual base::Result<void> tgkill(Pid pid, Tid tid, int sig) = 0;
  // rt_tgsigqueueinfo: si.si_signo to the thread with this siginfo. The kernel takes one from
  // another process only where si_code < 0 and not SI_TKILL (sigqueue, a timer's, mq, aio, SIGIO).
  virtual base::Result<void> queue_signal(Pid pid, Tid tid, const siginfo_t& si) = 0;
  // The threads of pid, as /proc/PID/task lists them.
  virtual std::vector<Tid> task_ids(Pid pid) = 0;
  // Its state letter in /proc/PID/task/TID/stat ('R', 'S', 't', 'Z', ...); 0 if unknown.
  virtual char task_state(Pid pid, Tid tid) = 0;
  // Its auxiliary vector (/proc/PID/auxv).
  virtual base::Result<Bytes> auxv(Pid pid) = 0;
  // The memory of pid (opened again after an exec: the old one still shows the old image).
  virtual base::Result<std::unique_ptr<RawMemory>> memory(Pid pid) = 0;
};

// The real one: ptrace, waitpid, tgkill, /proc.
Kernel& linux_kernel();

}  // namespace tracer
