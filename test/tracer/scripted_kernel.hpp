// A kernel made of a script, for driving LinuxTarget with no process at all (kernel.hpp): the
// test says what each thread does (a breakpoint's trap, a signal, an exit, a fork event) as
// the wait status the real kernel would give, and reads back what the core asked (each resume
// with its signal, each SIGSTOP, each detach) and what it did to memory. It plays the kernel's
// part in between as the real one does: ptrace requests need a stopped thread, resuming runs
// it, a SIGSTOP sent to a running thread stops it (a status to wait for), one sent to a stopped
// thread waits until it runs, and a signal its mask blocks waits until the mask lets it through.
#pragma once

#include <sys/user.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "tracer/linux/kernel.hpp"

namespace tracer::testing {

// Wait statuses as the kernel encodes them.
inline int stopped_status(int sig, int event = 0) { return (event << 16) | (sig << 8) | 0x7f; }
inline int exited_status(int code) { return (code & 0xff) << 8; }
inline int killed_status(int sig) { return sig; }

class ScriptedKernel final : public Kernel {
 public:
  static constexpr Pid kServerPid = 1;  // the sender the kernel names in a tgkill's siginfo

  struct Thread {
    Pid pid = 0;
    bool running = false;
    bool traced = false;
    std::deque<siginfo_t> signals;  // pending: each stops it when it runs, unless blocked
    user_regs_struct regs{};
    siginfo_t siginfo{};
    std::uint64_t blocked = 0;  // its signal mask
    bool mask_fixed = false;    // PTRACE_SETSIGMASK fails for it
    unsigned long event_message = 0;
    SyscallStop syscall;
    char state = 't';
    std::uint64_t dr[8] = {};
  };

  // --- the script -----------------------------------------------------------------------
  // A process whose threads are tids (the first is its leader), all stopped, not traced yet,
  // with memory [base, base + code.size()) holding code.
  void add_process(Pid pid, std::vector<Tid> tids, Addr base, Bytes code) {
    for (Tid tid : tids) {
      Thread& t = threads_[tid];
      t.pid = pid;
    }
    memory_[pid] = std::make_shared<Region>(Region{base, std::move(code)});
  }
  // A vfork child: pid runs in parent's memory (the very bytes) until it execs.
  void share_memory(Pid pid, Pid parent) { memory_[pid] = memory_.at(parent); }
  // pid exec'd: memory of its own, holding code.
  void new_image(Pid pid, Addr base, Bytes code) { memory_[pid] = std::make_shared<Region>(Region{base, std::move(code)}); }
  Thread& thread(Tid tid) {
    auto it = threads_.find(tid);
    if (it == threads_.end()) {
      throw std::logic_error("no scripted thread " + std::to_string(tid));
    }
    return it->second;
  }
  // A running thread stops with this status, at pc, with this si_code.
  void event(Tid tid, int status, Addr pc, int si_code = 0) {
    Thread& t = thread(tid);
    if (!t.running) {
      throw std::logic_error("scripted thread " + std::to_string(tid) + " is not running");
    }
    t.running = false;
    t.regs.rip = pc;
    std::memset(&t.siginfo, 0, sizeof t.siginfo);
    t.siginfo.si_signo = WIFSTOPPED(status) ? WSTOPSIG(status) & 0x7f : 0;
    t.siginfo.si_code = si_code;
    statuses_.push_back({tid, status});
  }
  // A signal with this siginfo comes for tid from elsewhere: it stops tid now if tid runs and
  // does not block it, else it waits.
  void send(Tid tid, const siginfo_t& si) { deliver_or_keep(thread(tid), tid, si); }
  // Called with each thread the core resumes that does not stop at once: the script's next move.
  std::function<void(Tid)> when_resumed;
  // A thread ends (exited_status, killed_status), running or not: gone from the kernel.
  void end(Tid tid, int status) {
    (void)thread(tid);
    threads_.erase(tid);
    statuses_.push_back({tid, status});
  }
  // The end of a thread gone already, waited for a second time: the real kernel's way with a
  // traced process whose parent is not its tracer (reaped by the tracer, then by its parent, or
  // by the reaper of its orphans, which may be the tracer again).
  void seen_again(Tid tid, int status) { statuses_.push_back({tid, status}); }
  // A new thread or fork child: stopped at birth, its SIGSTOP to be waited for.
  void born(Pid pid, Tid tid, Addr pc) {
    Thread& t = threads_[tid];
    t.pid = pid;
    t.traced = true;
    t.regs.rip = pc;
    statuses_.push_back({tid, stopped_status(SIGSTOP)});
  }
  // What the core asked, in order: "cont 101", "step 101 sig 10", "syscall 101",
  // "tgkill 102 SIGSTOP", "detach 101".
  std::vector<std::string> calls;
  std::string take_calls() {
    std::string out;
    for (const auto& c : calls) {
      out += out.empty() ? c : "; " + c;
    }
    calls.clear();
    return out;
  }
  std::uint8_t byte_at(Pid pid, Addr addr) const {
    const Region& r = *memory_.at(pid);
    return r.bytes.at(addr - r.base);
  }
  bool waiting() const { return !statuses_.empty(); }

  // --- Kernel -----------------------------------------------------------------------------
  void hand_back(WaitStatus status) override { statuses_.push_front(status); }
  std::optional<WaitStatus> wait_any(bool) override {
    if (statuses_.empty()) {
      return std::nullopt;
    }
    const WaitStatus w = statuses_.front();
    statuses_.pop_front();
    return w;
  }
  base::Result<int> wait_for(Tid tid) override {
    for (auto it = statuses_.begin(); it != statuses_.end(); ++it) {
      if (it->tid == tid) {
        const int status = it->status;
        statuses_.erase(it);
        return status;
      }
    }
    return base::Error{base::Errc::system, ECHILD, "waitpid " + std::to_string(tid)};
  }
  base::Result<std::optional<int>> poll_for(Tid tid) override {
    for (auto it = statuses_.begin(); it != statuses_.end(); ++it) {
      if (it->tid == tid) {
        const int status = it->status;
        statuses_.erase(it);
        return std::optional<int>(status);
      }
    }
    return std::optional<int>();
  }
  base::Result<void> attach(Tid tid) override {
    Thread& t = thread(tid);
    t.traced = true;
    statuses_.push_back({tid, stopped_status(SIGSTOP)});
    calls.push_back("attach " + std::to_string(tid));
    return base::success();
  }
  base::Result<void> resume(Tid tid, bool step, int sig) override {
    return run(tid, std::string(step ? "step " : "cont ") + std::to_string(tid), sig);
  }
  base::Result<void> resume_to_syscall(Tid tid, int sig) override {
    return run(tid, "syscall " + std::to_string(tid), sig);
  }
  base::Result<SyscallStop> syscall_stop(Tid tid) override {
    if (auto r = stopped(tid); !r) {
      return std::move(r).error();
    }
    return thread(tid).syscall;
  }
  base::Result<void> set_options(Tid tid, long) override { return stopped(tid); }
  base::Result<void> detach(Tid tid, int sig) override {
    if (auto r = stopped(tid); !r) {
      return r;
    }
    calls.push_back("detach " + std::to_string(tid) + (sig != 0 ? " sig " + std::to_string(sig) : ""));
    threads_.erase(tid);
    return base::success();
  }
  base::Result<unsigned long> event_message(Tid tid) override {
    if (auto r = stopped(tid); !r) {
      return std::move(r).error();
    }
    return thread(tid).event_message;
  }
  base::Result<siginfo_t> get_siginfo(Tid tid) override {
    if (auto r = stopped(tid); !r) {
      return std::move(r).error();
    }
    return thread(tid).siginfo;
  }
  base::Result<void> set_siginfo(Tid tid, const siginfo_t& si) override {
    if (auto r = stopped(tid); !r) {
      return r;
    }
    thread(tid).siginfo = si;
    return base::success();
  }
  base::Result<std::uint64_t> signal_mask(Tid tid) override {
    if (auto r = stopped(tid); !r) {
      return std::move(r).error();
    }
    return thread(tid).blocked;
  }
  base::Result<void> set_signal_mask(Tid tid, std::uint64_t mask) override {
    if (auto r = stopped(tid); !r) {
      return r;
    }
    if (thread(tid).mask_fixed) {
      return base::Error{base::Errc::system, EIO, "PTRACE_SETSIGMASK " + std::to_string(tid)};
    }
    thread(tid).blocked = mask & ~((1ull << (SIGKILL - 1)) | (1ull << (SIGSTOP - 1)));  // (as the kernel does)
    return base::success();
  }
  base::Result<Addr> thread_area_base(Tid, int) override {
    return base::make_error(base::Errc::unsupported, "no 32-bit threads in scripts");
  }
  base::Result<RseqArea> rseq_area(Tid) override {
    return RseqArea{};  // (no rseq registered in scripts)
  }
  base::Result<std::uint64_t> get_debugreg(Tid tid, int i) override {
    if (auto r = stopped(tid); !r) {
      return std::move(r).error();
    }
    return thread(tid).dr[i];
  }
  base::Result<void> set_debugreg(Tid tid, int i, std::uint64_t value) override {
    if (auto r = stopped(tid); !r) {
      return r;
    }
    thread(tid).dr[i] = value;
    return base::success();
  }
  base::Result<void> read_gprs(Tid tid, arch::x86::RawRegisters& raw) override {
    if (auto r = stopped(tid); !r) {
      return r;
    }
    std::memcpy(raw.gpr.data(), &thread(tid).regs, sizeof(user_regs_struct));
    return base::success();
  }
  base::Result<void> read_xstate(Tid tid, arch::x86::RawRegisters& raw) override {
    if (auto r = stopped(tid); !r) {
      return r;
    }
    raw.xsave.assign(512, 0);  // FXSAVE-sized, all zero
    return base::success();
  }
  base::Result<void> write_registers(Tid tid, const arch::x86::RawRegisters& raw, bool) override {
    if (auto r = stopped(tid); !r) {
      return r;
    }
    std::memcpy(&thread(tid).regs, raw.gpr.data(), sizeof(user_regs_struct));
    return base::success();
  }
  base::Result<void> tgkill(Pid, Tid tid, int sig) override {
    auto it = threads_.find(tid);
    if (it == threads_.end()) {
      return base::Error{base::Errc::no_thread, ESRCH, "tgkill " + std::to_string(tid)};
    }
    if (sig == 0) {
      return base::success();
    }
    calls.push_back("tgkill " + std::to_string(tid) + " SIG" + sigabbrev_np(sig));
    siginfo_t si{};
    si.si_signo = sig;
    si.si_code = SI_TKILL;
    si.si_pid = kServerPid;
    deliver_or_keep(it->second, tid, si);
    return base::success();
  }
  base::Result<void> queue_signal(Pid, Tid tid, const siginfo_t& si) override {
    auto it = threads_.find(tid);
    if (it == threads_.end()) {
      return base::Error{base::Errc::no_thread, ESRCH, "rt_tgsigqueueinfo " + std::to_string(tid)};
    }
    if (si.si_code >= 0 || si.si_code == SI_TKILL) {
      return base::Error{base::Errc::system, EPERM, "rt_tgsigqueueinfo " + std::to_string(tid)};
    }
    calls.push_back("queue " + std::to_string(tid) + " SIG" + sigabbrev_np(si.si_signo) + " code " +
                    std::to_string(si.si_code) + " value " + std::to_string(si.si_value.sival_int));
    deliver_or_keep(it->second, tid, si);
    return base::success();
  }
  std::vector<Tid> task_ids(Pid pid) override {
    std::vector<Tid> out;
    for (const auto& [tid, t] : threads_) {
      if (t.pid == pid) {
        out.push_back(tid);
      }
    }
    return out;
  }
  char task_state(Pid, Tid tid) override {
    auto it = threads_.find(tid);
    return it == threads_.end() ? 'X' : it->second.state;
  }
  base::Result<Bytes> auxv(Pid pid) override {
    return base::make_error(base::Errc::unsupported, "no auxv for scripted process " + std::to_string(pid));
  }
  base::Result<std::unique_ptr<RawMemory>> memory(Pid pid) override {
    auto it = memory_.find(pid);
    if (it == memory_.end()) {
      return base::make_error(base::Errc::no_process, "no scripted process " + std::to_string(pid));
    }
    return std::unique_ptr<RawMemory>(std::make_unique<Memory>(it->second));
  }

 private:
  struct Region {
    Addr base = 0;
    Bytes bytes;
  };
  class Memory final : public RawMemory {
   public:
    explicit Memory(std::shared_ptr<Region> region) : region_(std::move(region)) {}
    base::Result<Bytes> read(Addr addr, std::size_t len) const override {
      if (addr < region_->base || addr >= region_->base + region_->bytes.size()) {
        return base::Error{base::Errc::system, EIO, "read outside the scripted memory"};
      }
      const std::size_t at = addr - region_->base;
      const std::size_t n = std::min(len, region_->bytes.size() - at);
      return Bytes(region_->bytes.begin() + static_cast<long>(at), region_->bytes.begin() + static_cast<long>(at + n));
    }
    base::Result<void> write(Addr addr, const Bytes& data) const override {
      if (addr < region_->base || addr + data.size() > region_->base + region_->bytes.size()) {
        return base::Error{base::Errc::system, EIO, "write outside the scripted memory"};
      }
      std::copy(data.begin(), data.end(), region_->bytes.begin() + static_cast<long>(addr - region_->base));
      return base::success();
    }

   private:
    std::shared_ptr<Region> region_;
  };

  base::Result<void> stopped(Tid tid) {
    auto it = threads_.find(tid);
    if (it == threads_.end() || it->second.running || !it->second.traced) {
      return base::Error{base::Errc::no_thread, ESRCH, "ptrace " + std::to_string(tid)};
    }
    return base::success();
  }
  static bool blocks(const Thread& t, int sig) { return (t.blocked & (1ull << (sig - 1))) != 0; }
  // A signal for t: it stops t now if t runs and takes it, else it waits.
  void deliver_or_keep(Thread& t, Tid tid, const siginfo_t& si) {
    if (t.running && !blocks(t, si.si_signo)) {
      stop_with(t, tid, si);
    } else {
      t.signals.push_back(si);
    }
  }
  void stop_with(Thread& t, Tid tid, const siginfo_t& si) {
    event(tid, stopped_status(si.si_signo), t.regs.rip);
    t.siginfo = si;
  }
  base::Result<void> run(Tid tid, std::string call, int sig) {
    if (auto r = stopped(tid); !r) {
      return r;
    }
    calls.push_back(sig != 0 ? call + " sig " + std::to_string(sig) : call);
    Thread& t = thread(tid);
    t.running = true;
    // A signal sent while it was stopped, which it does not block, stops it at once.
    auto first = std::find_if(t.signals.begin(), t.signals.end(), [&](const siginfo_t& si) { return !blocks(t, si.si_signo); });
    if (first != t.signals.end()) {
      const siginfo_t si = *first;
      t.signals.erase(first);
      stop_with(t, tid, si);
    } else if (when_resumed) {
      when_resumed(tid);
    }
    return base::success();
  }

  std::map<Tid, Thread> threads_;
  std::deque<WaitStatus> statuses_;
  std::map<Pid, std::shared_ptr<Region>> memory_;
};

}  // namespace tracer::testing
