// While the server runs a stopped thread of the program for its own ends (a call of the
// recorder's, the steps out of its cache), a signal that comes for the thread is not taken: it
// stays pending in the kernel, siginfo and all, and reaches the event pipeline once the thread
// runs for the program again, as if the server had not run it (no signal sent again with
// another siginfo). For the while the thread's mask blocks every signal but those its own
// instructions raise (faults and traps); then the program's mask is put back, unless the
// program changed it meanwhile (a sigprocmask it ran).
//
// A signal no mask holds (SIGSTOP), or one that comes where the mask may not be set, stops the
// thread and is taken: HeldSignal keeps it with its siginfo, and send_again sends it once more.
#pragma once

#include <csignal>
#include <cstdint>
#include <optional>
#include <vector>

#include "tracer/linux/kernel.hpp"

namespace tracer {

// A signal that stopped a thread while the server ran it for its own ends, taken there.
struct HeldSignal {
  Tid tid = 0;
  int sig = 0;
  std::optional<siginfo_t> siginfo;  // as the thread stopped with it (none: unreadable)
};

// The signal tid stopped with (status: its wait status), taken now.
HeldSignal held_signal(Kernel& kernel, Tid tid, int status);

// Each sent to its thread again: with its own siginfo where the kernel takes one from the server
// (rt_tgsigqueueinfo: sigqueue's, a timer's, mq's, aio's, SIGIO's), else by tgkill, whose siginfo
// names the server (a kill(2)'s sender, SIGCHLD's child: the kernel lets no other process forge
// them).
void send_again(Kernel& kernel, Pid pid, const std::vector<HeldSignal>& signals);

class SignalsHeldBack {
 public:
  SignalsHeldBack() = default;
  // Holds tid's signals back. Nothing is held where its mask cannot be read or set, nor for a
  // thread interrupted in ppoll, pselect6, epoll_pwait or rt_sigsuspend (`regs`): it has a mask
  // the kernel puts back after it, which a mask set by ptrace would make it forget.
  static SignalsHeldBack hold(Kernel& kernel, Tid tid, const arch::x86::RawRegisters& regs);
  SignalsHeldBack(SignalsHeldBack&& other) noexcept;
  SignalsHeldBack& operator=(SignalsHeldBack&& other) noexcept;
  SignalsHeldBack(const SignalsHeldBack&) = delete;
  SignalsHeldBack& operator=(const SignalsHeldBack&) = delete;
  ~SignalsHeldBack() { release(); }
  // The program's mask back (once; a thread gone meanwhile has none to take).
  void release();
  bool holding() const { return program_mask_.has_value(); }

 private:
  Kernel* kernel_ = nullptr;
  Tid tid_ = 0;
  std::optional<std::uint64_t> program_mask_;
};

}  // namespace tracer
