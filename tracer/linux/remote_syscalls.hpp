// System calls the server makes in a program, on one of its stopped threads: the thread is
// pointed at a `syscall` instruction already in the program's memory (its vDSO's) and run to
// the call's exit stop (PTRACE_SYSCALL). No code of the program's runs, nothing is written to
// its code, no signal is raised in it. How the server maps the recorder (recorder_loader.hpp).
//
// Afterwards the thread is put back in a signal-delivery stop (a SIGSTOP of the server's, taken
// unreported) with its own registers and siginfo: resumed with a signal, it delivers that signal
// with the siginfo it stopped with, as if nothing had run.
#pragma once

#include <chrono>
#include <csignal>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <utility>
#include <vector>

#include "arch/x86/raw_registers.hpp"
#include "base/result.hpp"
#include "tracer/linux/kernel.hpp"
#include "tracer/linux/signals_held_back.hpp"
#include "tracer/types.hpp"

namespace tracer {

// The next status of tid; at `deadline` it is stopped with SIGSTOP (timed_out set then).
base::Result<int> status_by(Kernel& kernel, Pid pid, Tid tid, std::chrono::steady_clock::time_point deadline,
                            bool& timed_out);

// Where a `syscall` instruction (0f 05) stands in pid's vDSO, else in a mapping of code of the
// program's files: an address from which a thread can be made to enter the kernel.
base::Result<Addr> find_syscall_instruction(Kernel& kernel, Pid pid);

class RemoteSyscalls {
 public:
  // On tid, stopped where a call may run (call_refused); a system call it was stopped inside
  // (a clone, fork, exec or vfork-done event) first runs to its end, its result kept. `at`:
  // the address of a `syscall` instruction (find_syscall_instruction).
  static base::Result<RemoteSyscalls> begin(Kernel& kernel, Pid pid, Tid tid, Addr at);
  RemoteSyscalls(RemoteSyscalls&& other) noexcept;
  RemoteSyscalls& operator=(RemoteSyscalls&&) = delete;
  ~RemoteSyscalls();

  // The kernel's result (-errno on failure), or why there is none.
  base::Result<std::int64_t> run(long number, std::initializer_list<std::uint64_t> args);
  // Runs function(args) in the program (its stack below the thread's red zone) and takes its
  // result when it returns to `return_to`, a `syscall` instruction of the server's (the
  // recorder's return gadget): the return's stop at that syscall's entry ends it, no fault.
  // System calls the function makes run as usual. `limit`: abandoned after it (Errc::timed_out).
  base::Result<std::uint64_t> call(Addr function, std::initializer_list<std::uint64_t> args, Addr return_to,
                                   std::chrono::milliseconds limit = std::chrono::milliseconds(5000));
  // The thread as it was: registers, stop kind, siginfo. Signals that stopped it meanwhile were
  // taken: take_held() lists them, for the caller to send again (send_again).
  base::Result<void> end();
  std::vector<HeldSignal> take_held() { return std::exchange(held_, {}); }

 private:
  RemoteSyscalls(Kernel& kernel, Pid pid, Tid tid, Addr at) : kernel_(&kernel), pid_(pid), tid_(tid), at_(at) {}
  // The thread's own registers but these, written: `args` in the registers `order` names, rip, rax
  // and rsp as given, no system call to restart, the trap and direction flags clear.
  base::Result<void> start_at(Addr rip, const int (&order)[6], std::initializer_list<std::uint64_t> args,
                              std::uint64_t rax, Addr sp);
  // Resumes the thread (to its next syscall stop, or on) and waits for its next stop, not an
  // event of a task a called function made; an exit is an error.
  base::Result<int> resume_to_stop(bool to_syscall, std::chrono::steady_clock::time_point deadline, bool& timed_out);
  // Resumes to the next syscall stop of the thread; signals on the way are held.
  base::Result<void> to_syscall_stop(std::chrono::steady_clock::time_point deadline);

  Kernel* kernel_;
  Pid pid_;
  Tid tid_;
  Addr at_;
  arch::x86::RawRegisters saved_;
  std::optional<siginfo_t> siginfo_;
  SignalsHeldBack held_back_;  // signals that come meanwhile stay pending, as the program's
  bool moved_ = false;           // the thread left its stop: end() puts it back
  bool in_signal_stop_ = false;  // it stands in a signal-delivery stop (not a syscall stop)
  bool ended_ = false;
  std::vector<HeldSignal> held_;
};

}  // namespace tracer
