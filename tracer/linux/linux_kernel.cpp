// The kernel the core asks in real life: ptrace (ptrace_calls.cpp, registers.cpp,
// debug_registers.cpp), waitpid, tgkill and /proc.
#include <sys/wait.h>

#include <cerrno>
#include <deque>

#include "base/log.hpp"
#include "tracer/linux/debug_registers.hpp"
#include "tracer/linux/kernel.hpp"
#include "tracer/linux/procfs.hpp"
#include "tracer/linux/ptrace_calls.hpp"
#include "tracer/linux/registers.hpp"

namespace tracer {
namespace {

class LinuxKernel final : public Kernel {
 public:
  void hand_back(WaitStatus status) override { handed_back_.push_back(status); }
  std::optional<WaitStatus> wait_any(bool block) override {
    if (!handed_back_.empty()) {
      const WaitStatus w = handed_back_.front();
      handed_back_.pop_front();
      return w;
    }
    for (;;) {
      int st = 0;
      const Tid tid = ::waitpid(-1, &st, block ? __WALL : __WALL | WNOHANG);
      if (tid > 0) {
        base::logf(base::LogCat::ptrace, "waitpid: {} status {:#x}", tid, st);
        return WaitStatus{tid, st};
      }
      if (tid < 0 && errno == EINTR && !block) {
        continue;
      }
      return std::nullopt;  // none now, a tick ended the wait, or no children at all
    }
  }
  base::Result<int> wait_for(Tid tid) override {
    for (;;) {
      int st = 0;
      if (const Tid w = ::waitpid(tid, &st, __WALL); w == tid) {
        base::logf(base::LogCat::ptrace, "waitpid({}) status {:#x}", tid, st);
        return st;
      }
      if (errno != EINTR) {
        return base::sys_error("waitpid " + std::to_string(tid));
      }
    }
  }
  base::Result<std::optional<int>> poll_for(Tid tid) override {
    for (;;) {
      int st = 0;
      const Tid w = ::waitpid(tid, &st, __WALL | WNOHANG);
      if (w == tid) {
        base::logf(base::LogCat::ptrace, "waitpid({}) status {:#x}", tid, st);
        return std::optional<int>(st);
      }
      if (w == 0) {
        return std::optional<int>();
      }
      if (errno != EINTR) {
        return base::sys_error("waitpid " + std::to_string(tid));
      }
    }
  }
  base::Result<void> attach(Tid tid) override { return pt::attach(tid); }
  base::Result<void> resume(Tid tid, bool step, int sig) override { return pt::resume(tid, step, sig); }
  base::Result<void> resume_to_syscall(Tid tid, int sig) override { return pt::resume_to_syscall(tid, sig); }
  base::Result<SyscallStop> syscall_stop(Tid tid) override { return pt::syscall_stop(tid); }
  base::Result<void> set_options(Tid tid, long options) override { return pt::set_options(tid, options); }
  base::Result<void> detach(Tid tid, int sig) override { return pt::detach(tid, sig); }
  base::Result<unsigned long> event_message(Tid tid) override { return pt::event_message(tid); }
  base::Result<siginfo_t> get_siginfo(Tid tid) override { return pt::get_siginfo(tid); }
  base::Result<void> set_siginfo(Tid tid, const siginfo_t& si) override { return pt::set_siginfo(tid, si); }
  base::Result<std::uint64_t> signal_mask(Tid tid) override { return pt::signal_mask(tid); }
  base::Result<void> set_signal_mask(Tid tid, std::uint64_t mask) override { return pt::set_signal_mask(tid, mask); }
  base::Result<std::uint64_t> get_debugreg(Tid tid, int i) override { return pt::get_debugreg(tid, i); }
  base::Result<void> set_debugreg(Tid tid, int i, std::uint64_t value) override {
    return pt::set_debugreg(tid, i, value);
  }
  base::Result<Addr> thread_area_base(Tid tid, int entry) override { return pt::thread_area_base(tid, entry); }
  base::Result<RseqArea> rseq_area(Tid tid) override { return pt::rseq_area(tid); }
  base::Result<void> read_gprs(Tid tid, arch::x86::RawRegisters& raw) override {
    return read_gpr_registers(tid, raw);
  }
  base::Result<void> read_xstate(Tid tid, arch::x86::RawRegisters& raw) override {
    return read_xstate_registers(tid, raw);
  }
  base::Result<void> write_registers(Tid tid, const arch::x86::RawRegisters& raw, bool xstate_changed) override {
    return write_raw_registers(tid, raw, xstate_changed);
  }
  base::Result<void> tgkill(Pid pid, Tid tid, int sig) override { return pt::tgkill(pid, tid, sig); }
  base::Result<void> queue_signal(Pid pid, Tid tid, const siginfo_t& si) override {
    return pt::tgsigqueueinfo(pid, tid, si);
  }
  std::vector<Tid> task_ids(Pid pid) override { return procfs::task_ids(pid); }
  char task_state(Pid pid, Tid tid) override {
    auto st = procfs::task_stat(pid, tid);
    return st ? st->state : '\0';
  }
  base::Result<Bytes> auxv(Pid pid) override { return procfs::read_file("/proc/" + std::to_string(pid) + "/auxv"); }
  base::Result<std::unique_ptr<RawMemory>> memory(Pid pid) override {
    auto mem = std::make_unique<ProcessMemory>();
    if (auto res = mem->open(pid); !res) {
      return std::move(res).error();
    }
    return std::unique_ptr<RawMemory>(std::move(mem));
  }

 private:
  std::deque<WaitStatus> handed_back_;  // (hand_back: before any waitpid)
};

}  // namespace

Kernel& linux_kernel() {
  static LinuxKernel kernel;
  return kernel;
}

}  // namespace tracer
