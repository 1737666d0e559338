#include "tracer/linux/signals_held_back.hpp"

#include <csignal>
#include <utility>

#include <sys/wait.h>

#include "tracer/linux/call_refusal.hpp"

namespace tracer {
namespace {

constexpr std::uint64_t bit(int sig) {
  return 1ull << (sig - 1);
}

// Every signal but the ones an instruction raises itself (which the kernel would unblock, and
// reset the handler of, to deliver) and those no mask holds.
constexpr std::uint64_t kHeldBack = ~(bit(SIGSEGV) | bit(SIGBUS) | bit(SIGILL) | bit(SIGFPE) | bit(SIGTRAP) |
                                      bit(SIGSYS) | bit(SIGKILL) | bit(SIGSTOP));

// What rt_tgsigqueueinfo accepts from another process.
bool queueable(const siginfo_t& si) {
  return si.si_code < 0 && si.si_code != SI_TKILL;
}

}  // namespace

HeldSignal held_signal(Kernel& kernel, Tid tid, int status) {
  HeldSignal held{tid, WSTOPSIG(status), std::nullopt};
  if (auto si = kernel.get_siginfo(tid); si && si->si_signo == held.sig) {
    held.siginfo = *si;
  }
  return held;
}

void send_again(Kernel& kernel, Pid pid, const std::vector<HeldSignal>& signals) {
  for (const HeldSignal& h : signals) {
    if (h.siginfo && queueable(*h.siginfo) && kernel.queue_signal(pid, h.tid, *h.siginfo)) {
      continue;
    }
    (void)kernel.tgkill(pid, h.tid, h.sig);
  }
}

SignalsHeldBack SignalsHeldBack::hold(Kernel& kernel, Tid tid, const arch::x86::RawRegisters& regs) {
  SignalsHeldBack held;
  if (in_wait_under_own_mask(regs)) {
    return held;
  }
  auto mask = kernel.signal_mask(tid);
  if (!mask || (*mask | kHeldBack) == *mask) {
    return held;  // (nothing to hold back that the program does not already)
  }
  if (!kernel.set_signal_mask(tid, *mask | kHeldBack)) {
    return held;
  }
  held.kernel_ = &kernel;
  held.tid_ = tid;
  held.program_mask_ = *mask;
  return held;
}

SignalsHeldBack::SignalsHeldBack(SignalsHeldBack&& other) noexcept
    : kernel_(other.kernel_), tid_(other.tid_), program_mask_(std::exchange(other.program_mask_, std::nullopt)) {}

SignalsHeldBack& SignalsHeldBack::operator=(SignalsHeldBack&& other) noexcept {
  if (this != &other) {
    release();
    kernel_ = other.kernel_;
    tid_ = other.tid_;
    program_mask_ = std::exchange(other.program_mask_, std::nullopt);
  }
  return *this;
}

void SignalsHeldBack::release() {
  if (!program_mask_) {
    return;
  }
  const std::uint64_t program = *std::exchange(program_mask_, std::nullopt);
  auto now = kernel_->signal_mask(tid_);
  if (now && *now == (program | kHeldBack)) {
    (void)kernel_->set_signal_mask(tid_, program);
  }
}

}  // namespace tracer
