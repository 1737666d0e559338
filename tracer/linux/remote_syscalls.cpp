#include "tracer/linux/remote_syscalls.hpp"

#include <sys/ptrace.h>
#include <sys/wait.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <sstream>
#include <thread>

#include "arch/x86/register_layout.hpp"
#include "base/log.hpp"
#include <fmt/format.h>
#include "tracer/linux/call_refusal.hpp"
#include "tracer/linux/procfs.hpp"

namespace tracer {
namespace {

using arch::x86::RawRegisters;
namespace gpr = arch::x86;

constexpr std::uint64_t kRedZone = 128;
constexpr auto kSettleLimit = std::chrono::milliseconds(5000);
constexpr std::uint64_t kNoSyscall = static_cast<std::uint64_t>(-1);  // orig_rax: nothing to run or restart

bool is_syscall_stop(int status) { return WIFSTOPPED(status) && WSTOPSIG(status) == (SIGTRAP | 0x80); }

// A syscall stop of a tracee without PTRACE_O_TRACESYSGOOD: SIGTRAP with si_code SIGTRAP (an
// int3's is SI_KERNEL, a step's TRAP_TRACE).
bool plain_syscall_stop(Kernel& kernel, Tid tid, int status) {
  if (!WIFSTOPPED(status) || WSTOPSIG(status) != SIGTRAP || (status >> 16) != 0) {
    return false;
  }
  auto si = kernel.get_siginfo(tid);
  return si && si->si_code == SIGTRAP;
}

// The first `syscall` instruction in [start, end) of pid's memory.
std::optional<Addr> syscall_in(Kernel& kernel, Pid pid, Addr start, Addr end) {
  auto memory = kernel.memory(pid);
  if (!memory || end <= start) {
    return std::nullopt;
  }
  auto bytes = (*memory)->read(start, std::min<std::uint64_t>(end - start, 1u << 20));
  if (!bytes) {
    return std::nullopt;
  }
  static constexpr std::uint8_t kSyscall[] = {0x0f, 0x05};
  auto it = std::search(bytes->begin(), bytes->end(), std::begin(kSyscall), std::end(kSyscall));
  if (it == bytes->end()) {
    return std::nullopt;
  }
  return start + static_cast<Addr>(it - bytes->begin());
}

}  // namespace

base::Result<int> status_by(Kernel& kernel, Pid pid, Tid tid, std::chrono::steady_clock::time_point deadline,
                            bool& timed_out) {
  // (A stop most often comes within microseconds, a step's or a short call's: the first polls
  // only yield the CPU to the thread, then the pauses grow.)
  constexpr int kYieldingPolls = 64;
  auto pause = std::chrono::microseconds(20);
  for (int polls = 0;; ++polls) {
    auto polled = kernel.poll_for(tid);
    if (!polled) {
      return polled.error();
    }
    if (*polled) {
      return **polled;
    }
    if (!timed_out && std::chrono::steady_clock::now() >= deadline) {
      timed_out = true;
      if (auto k = kernel.tgkill(pid, tid, SIGSTOP); !k) {
        return k.error();
      }
      // (A thread that ignores even SIGSTOP's stop is in the kernel for good: a stuck mount.)
      const auto last = std::chrono::steady_clock::now() + kSettleLimit;
      while (std::chrono::steady_clock::now() < last) {
        auto again = kernel.poll_for(tid);
        if (!again) {
          return again.error();
        }
        if (*again) {
          return **again;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
      return base::Error{base::Errc::timed_out, 0, "the thread did not stop even for SIGSTOP"};
    }
    if (polls < kYieldingPolls) {
      std::this_thread::yield();
      continue;
    }
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::microseconds(2000));
  }
}

base::Result<Addr> find_syscall_instruction(Kernel& kernel, Pid pid) {
  auto maps = procfs::read_file(fmt::format("/proc/{}/maps", pid));
  if (!maps) {
    return maps.error();
  }
  std::istringstream lines(std::string(maps->begin(), maps->end()));
  std::string line;
  std::vector<std::pair<Addr, Addr>> code;  // the vDSO first, then file-backed r-x mappings
  while (std::getline(lines, line)) {
    unsigned long long lo = 0, hi = 0;
    char perms[8] = {};
    if (std::sscanf(line.c_str(), "%llx-%llx %7s", &lo, &hi, perms) != 3 || perms[0] != 'r' || perms[2] != 'x') {
      continue;
    }
    if (line.find("[vdso]") != std::string::npos) {
      code.insert(code.begin(), {lo, hi});
    } else if (line.find(" /") != std::string::npos) {
      code.emplace_back(lo, hi);
    }
  }
  for (const auto& [lo, hi] : code) {
    if (auto at = syscall_in(kernel, pid, lo, hi)) {
      return *at;
    }
  }
  return base::make_error(base::Errc::unsupported, "the program has no system call instruction the server can use");
}

base::Result<RemoteSyscalls> RemoteSyscalls::begin(Kernel& kernel, Pid pid, Tid tid, Addr at) {
  RemoteSyscalls rs(kernel, pid, tid, at);
  if (auto r = kernel.read_gprs(tid, rs.saved_); !r) {
    return r.error();
  }
  auto siginfo = kernel.get_siginfo(tid);
  if (auto why = call_refused(rs.saved_, siginfo)) {
    rs.ended_ = true;  // (nothing to put back)
    return base::make_error(base::Errc::not_yet, *why);
  }
  if (siginfo) {
    rs.siginfo_ = *siginfo;
  }
  rs.held_back_ = SignalsHeldBack::hold(kernel, tid, rs.saved_);
  if (auto r = kernel.read_xstate(tid, rs.saved_); !r) {  // (a called function may use the vector registers)
    return r.error();
  }
  auto& r = rs.saved_.gpr;
  const bool inside = static_cast<std::int64_t>(r[gpr::kOrigRax]) >= 0 && static_cast<std::int64_t>(r[gpr::kRax]) == -ENOSYS;
  if (inside) {
    // (call_refused let it through: an event after which the call goes on to its end.)
    rs.moved_ = true;
    if (auto s = rs.to_syscall_stop(std::chrono::steady_clock::now() + kSettleLimit); !s) {
      return s.error();
    }
    RawRegisters now;
    if (auto g = kernel.read_gprs(tid, now); !g) {
      return g.error();
    }
    r[gpr::kRax] = now.gpr[gpr::kRax];
    r[gpr::kOrigRax] = kNoSyscall;  // done: nothing to restart
    r[gpr::kRip] = now.gpr[gpr::kRip];
  }
  return rs;
}

RemoteSyscalls::RemoteSyscalls(RemoteSyscalls&& other) noexcept
    : kernel_(other.kernel_), pid_(other.pid_), tid_(other.tid_), at_(other.at_), saved_(other.saved_),
      siginfo_(other.siginfo_), held_back_(std::move(other.held_back_)), moved_(other.moved_), ended_(other.ended_),
      held_(std::move(other.held_)) {
  other.ended_ = true;
}

RemoteSyscalls::~RemoteSyscalls() {
  if (!ended_) {
    (void)end();
  }
}

base::Result<int> RemoteSyscalls::resume_to_stop(bool to_syscall, std::chrono::steady_clock::time_point deadline,
                                                 bool& timed_out) {
  for (;;) {
    if (auto r = to_syscall ? kernel_->resume_to_syscall(tid_, 0) : kernel_->resume(tid_, false, 0); !r) {
      return r.error();
    }
    auto status = status_by(*kernel_, pid_, tid_, deadline, timed_out);
    if (!status) {
      return status.error();
    }
    const int st = *status;
    if (WIFEXITED(st) || WIFSIGNALED(st)) {
      ended_ = true;
      kernel_->hand_back({tid_, st});  // (the core's to report: GDB hears of the end)
      return base::Error{base::Errc::no_process, 0, "the process ended during the server's system call"};
    }
    if (!WIFSTOPPED(st)) {
      continue;
    }
    if ((st >> 16) == PTRACE_EVENT_EXIT) {
      ended_ = true;
      kernel_->hand_back({tid_, st});
      return base::Error{base::Errc::no_thread, 0, "the thread exited during the server's system call"};
    }
    if ((st >> 16) != 0) {
      continue;  // a clone or fork of the called function's: the new task stops on its own
    }
    return st;
  }
}

base::Result<void> RemoteSyscalls::to_syscall_stop(std::chrono::steady_clock::time_point deadline) {
  bool timed_out = false;
  for (;;) {
    auto status = resume_to_stop(true, deadline, timed_out);
    if (!status) {
      return status.error();
    }
    const int st = *status;
    if (is_syscall_stop(st) || plain_syscall_stop(*kernel_, tid_, st)) {
      in_signal_stop_ = false;
      return base::success();
    }
    const int sig = WSTOPSIG(st);
    if (sig == SIGSTOP && timed_out) {
      in_signal_stop_ = true;
      return base::Error{base::Errc::timed_out, 0, "the server's call in the program did not end in time"};
    }
    if (sig == SIGSEGV || sig == SIGILL || sig == SIGBUS || sig == SIGFPE || sig == SIGTRAP) {
      // (A fault of the recorder's own: the program must not see it.)
      in_signal_stop_ = true;
      return base::Error{base::Errc::failed, 0, fmt::format("the server's call in the program stopped with signal {}", sig)};
    }
    held_.push_back(held_signal(*kernel_, tid_, st));  // resumed without it; the caller sends it again
  }
}

base::Result<void> RemoteSyscalls::start_at(Addr rip, const int (&order)[6], std::initializer_list<std::uint64_t> args,
                                            std::uint64_t rax, Addr sp) {
  RawRegisters regs = saved_;
  auto& r = regs.gpr;
  std::size_t i = 0;
  for (std::uint64_t a : args) {
    r[order[i++]] = a;
  }
  r[gpr::kRip] = rip;
  r[gpr::kRsp] = sp;
  r[gpr::kRax] = rax;
  r[gpr::kOrigRax] = kNoSyscall;
  r[gpr::kEflags] &= ~(gpr::kEflagsDirection | gpr::kEflagsTrap);
  if (auto w = kernel_->write_registers(tid_, regs, false); !w) {
    return w;
  }
  moved_ = true;
  return base::success();
}

base::Result<std::int64_t> RemoteSyscalls::run(long number, std::initializer_list<std::uint64_t> args) {
  static constexpr int kArgs[] = {gpr::kRdi, gpr::kRsi, gpr::kRdx, gpr::kR10, gpr::kR8, gpr::kR9};
  if (args.size() > std::size(kArgs)) {
    return base::make_error(base::Errc::invalid, "a system call takes at most 6 arguments");
  }
  if (auto w = start_at(at_, kArgs, args, static_cast<std::uint64_t>(number), saved_.gpr[gpr::kRsp]); !w) {
    return w.error();
  }
  const auto deadline = std::chrono::steady_clock::now() + kSettleLimit;
  for (int stop = 0; stop < 2; ++stop) {  // its entry, then its exit
    if (auto s = to_syscall_stop(deadline); !s) {
      return s.error();
    }
  }
  RawRegisters now;
  if (auto g = kernel_->read_gprs(tid_, now); !g) {
    return g.error();
  }
  return static_cast<std::int64_t>(now.gpr[gpr::kRax]);
}

base::Result<std::uint64_t> RemoteSyscalls::call(Addr function, std::initializer_list<std::uint64_t> args,
                                                 Addr return_to, std::chrono::milliseconds limit) {
  static constexpr int kArgs[] = {gpr::kRdi, gpr::kRsi, gpr::kRdx, gpr::kRcx, gpr::kR8, gpr::kR9};
  if (args.size() > std::size(kArgs)) {
    return base::make_error(base::Errc::invalid, "a call takes at most 6 arguments");
  }
  auto memory = kernel_->memory(pid_);
  if (!memory) {
    return memory.error();
  }
  const Addr slot = ((saved_.gpr[gpr::kRsp] - kRedZone) & ~Addr{15}) - 8;  // as a `call` leaves it
  Bytes ret(8);
  std::memcpy(ret.data(), &return_to, 8);
  if (auto w = (*memory)->write(slot, ret); !w) {
    return w.error();
  }
  if (auto w = start_at(function, kArgs, args, 0 /* no vector arguments */, slot); !w) {
    return w.error();
  }
  const auto deadline = std::chrono::steady_clock::now() + limit;
  for (;;) {
    if (auto s = to_syscall_stop(deadline); !s) {
      return s.error();
    }
    RawRegisters now;
    if (auto g = kernel_->read_gprs(tid_, now); !g) {
      return g.error();
    }
    // (The first stop after the gadget's `syscall` is its entry: the call's end.)
    if (now.gpr[gpr::kRip] == return_to + 2 && now.gpr[gpr::kRsp] == slot + 8) {
      const std::uint64_t result = now.gpr[gpr::kOrigRax];  // (rax at the entry: the function's)
      now.gpr[gpr::kOrigRax] = kNoSyscall;                   // the gadget's syscall is skipped
      if (auto w = kernel_->write_registers(tid_, now, false); !w) {
        return w.error();
      }
      if (auto s = to_syscall_stop(deadline); !s) {  // to its exit: a stop any run() may follow
        return s.error();
      }
      return result;
    }
  }
}

base::Result<void> RemoteSyscalls::end() {
  if (ended_) {
    return base::success();
  }
  ended_ = true;
  if (moved_ && !in_signal_stop_) {
    // From a syscall stop to a signal-delivery stop: a SIGSTOP taken on the way back to user mode,
    // before any instruction runs.
    RawRegisters now;
    if (auto g = kernel_->read_gprs(tid_, now); !g) {
      return g.error();
    }
    now.gpr[gpr::kOrigRax] = kNoSyscall;
    if (auto w = kernel_->write_registers(tid_, now, false); !w) {
      return w.error();
    }
    if (auto k = kernel_->tgkill(pid_, tid_, SIGSTOP); !k) {
      return k.error();
    }
    const auto deadline = std::chrono::steady_clock::now() + kSettleLimit;
    bool timed_out = false;
    for (;;) {
      auto status = resume_to_stop(false, deadline, timed_out);
      if (!status) {
        return status.error();
      }
      if (WSTOPSIG(*status) == SIGSTOP) {
        break;
      }
      held_.push_back(held_signal(*kernel_, tid_, *status));
    }
  }
  auto restored = kernel_->write_registers(tid_, saved_, moved_);
  if (siginfo_) {
    (void)kernel_->set_siginfo(tid_, *siginfo_);
  }
  held_back_.release();
  return restored;
}

}  // namespace tracer
