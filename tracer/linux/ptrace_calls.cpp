// Logged ptrace requests.
#include "tracer/linux/ptrace_calls.hpp"

#include <array>

#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <unistd.h>

#include <cstddef>
#include <cstring>

#include "base/log.hpp"

namespace tracer::pt {
namespace {

base::Error ptrace_error(const char* what, Tid tid, int err) {
  if (err == ESRCH) {
    return base::Error{base::Errc::no_thread, err, std::string(what) + " " + std::to_string(tid)};
  }
  return base::sys_error(std::string(what) + " " + std::to_string(tid), err);
}

void* as_data(long v) { return reinterpret_cast<void*>(v); }

}  // namespace

base::Result<void> resume(Tid tid, bool step, int sig) {
  const auto req = step ? PTRACE_SINGLESTEP : PTRACE_CONT;
  base::logf(base::LogCat::ptrace, "{}({}, sig {})", step ? "PTRACE_SINGLESTEP" : "PTRACE_CONT",
             tid, sig);
  if (::ptrace(req, tid, nullptr, as_data(sig)) != 0) {
    return ptrace_error(step ? "PTRACE_SINGLESTEP" : "PTRACE_CONT", tid, errno);
  }
  return base::success();
}

base::Result<void> resume_to_syscall(Tid tid, int sig) {
  base::logf(base::LogCat::ptrace, "PTRACE_SYSCALL({}, sig {})", tid, sig);
  if (::ptrace(PTRACE_SYSCALL, tid, nullptr, as_data(sig)) != 0) {
    return ptrace_error("PTRACE_SYSCALL", tid, errno);
  }
  return base::success();
}

base::Result<SyscallStop> syscall_stop(Tid tid) {
  __ptrace_syscall_info info{};
  if (::ptrace(PTRACE_GET_SYSCALL_INFO, tid, as_data(sizeof info), &info) <= 0) {
    return ptrace_error("PTRACE_GET_SYSCALL_INFO", tid, errno);
  }
  if (info.op != PTRACE_SYSCALL_INFO_ENTRY && info.op != PTRACE_SYSCALL_INFO_EXIT) {
    return base::make_error(base::Errc::invalid, "thread " + std::to_string(tid) + " is in no syscall stop");
  }
  errno = 0;
  const long number = ::ptrace(PTRACE_PEEKUSER, tid, as_data(offsetof(user_regs_struct, orig_rax)), nullptr);
  if (errno != 0) {
    return ptrace_error("PTRACE_PEEKUSER orig_rax", tid, errno);
  }
  SyscallStop stop;
  stop.entry = info.op == PTRACE_SYSCALL_INFO_ENTRY;
  stop.number = static_cast<int>(number);
  base::logf(base::LogCat::ptrace, "thread {}: syscall {} {}", tid, stop.number, stop.entry ? "entry" : "exit");
  return stop;
}

base::Result<void> set_options(Tid tid, long options) {
  base::logf(base::LogCat::ptrace, "PTRACE_SETOPTIONS({}, {:#x})", tid, options);
  if (::ptrace(PTRACE_SETOPTIONS, tid, nullptr, as_data(options)) != 0) {
    return ptrace_error("PTRACE_SETOPTIONS", tid, errno);
  }
  return base::success();
}

base::Result<void> attach(Tid tid) {
  base::logf(base::LogCat::ptrace, "PTRACE_ATTACH({})", tid);
  if (::ptrace(PTRACE_ATTACH, tid, nullptr, nullptr) != 0) {
    return base::sys_error("PTRACE_ATTACH " + std::to_string(tid));
  }
  return base::success();
}

base::Result<void> detach(Tid tid, int sig) {
  base::logf(base::LogCat::ptrace, "PTRACE_DETACH({}, sig {})", tid, sig);
  if (::ptrace(PTRACE_DETACH, tid, nullptr, as_data(sig)) != 0) {
    return ptrace_error("PTRACE_DETACH", tid, errno);
  }
  return base::success();
}

base::Result<unsigned long> event_message(Tid tid) {
  unsigned long msg = 0;
  if (::ptrace(PTRACE_GETEVENTMSG, tid, nullptr, &msg) != 0) {
    return ptrace_error("PTRACE_GETEVENTMSG", tid, errno);
  }
  base::logf(base::LogCat::ptrace, "PTRACE_GETEVENTMSG({}) = {}", tid, msg);
  return msg;
}

base::Result<siginfo_t> get_siginfo(Tid tid) {
  siginfo_t si;
  std::memset(&si, 0, sizeof si);
  if (::ptrace(PTRACE_GETSIGINFO, tid, nullptr, &si) != 0) {
    return ptrace_error("PTRACE_GETSIGINFO", tid, errno);
  }
  base::logf(base::LogCat::ptrace, "PTRACE_GETSIGINFO({}) = signo {} code {}", tid, si.si_signo,
             si.si_code);
  return si;
}

base::Result<void> set_siginfo(Tid tid, const siginfo_t& si) {
  base::logf(base::LogCat::ptrace, "PTRACE_SETSIGINFO({}) signo {}", tid, si.si_signo);
  if (::ptrace(PTRACE_SETSIGINFO, tid, nullptr, &si) != 0) {
    return ptrace_error("PTRACE_SETSIGINFO", tid, errno);
  }
  return base::success();
}

base::Result<std::uint64_t> signal_mask(Tid tid) {
  std::uint64_t mask = 0;
  if (::ptrace(PTRACE_GETSIGMASK, tid, sizeof mask, &mask) != 0) {
    return ptrace_error("PTRACE_GETSIGMASK", tid, errno);
  }
  return mask;
}

base::Result<void> set_signal_mask(Tid tid, std::uint64_t mask) {
  base::logf(base::LogCat::ptrace, "PTRACE_SETSIGMASK({}) {:#x}", tid, mask);
  if (::ptrace(PTRACE_SETSIGMASK, tid, sizeof mask, &mask) != 0) {
    return ptrace_error("PTRACE_SETSIGMASK", tid, errno);
  }
  return base::success();
}

base::Result<Addr> thread_area_base(Tid tid, int entry) {
  std::array<std::uint32_t, 4> desc{};  // struct user_desc: entry_number, base_addr, limit, flags
  if (ptrace(PTRACE_GET_THREAD_AREA, tid, reinterpret_cast<void*>(static_cast<intptr_t>(entry)), desc.data()) != 0) {
    return ptrace_error("PTRACE_GET_THREAD_AREA", tid, errno);
  }
  return Addr{desc[1]};
}

base::Result<RseqArea> rseq_area(Tid tid) {
  __ptrace_rseq_configuration config{};
  if (::ptrace(PTRACE_GET_RSEQ_CONFIGURATION, tid, sizeof config, &config) != static_cast<long>(sizeof config)) {
    return ptrace_error("PTRACE_GET_RSEQ_CONFIGURATION", tid, errno);
  }
  return RseqArea{config.rseq_abi_pointer, config.signature};
}

base::Result<void> tgkill(Pid pid, Tid tid, int sig) {
  base::logf(base::LogCat::ptrace, "tgkill({}, {}, {})", pid, tid, describe_signal(sig));
  if (::syscall(SYS_tgkill, pid, tid, sig) == 0) {
    return base::success();
  }
  // A clone() without CLONE_THREAD is one of our "threads" in another thread group.
  if (errno == ESRCH && ::syscall(SYS_tkill, tid, sig) == 0) {
    return base::success();
  }
  return ptrace_error("tgkill", tid, errno);
}

base::Result<void> tgsigqueueinfo(Pid pid, Tid tid, const siginfo_t& si) {
  base::logf(base::LogCat::ptrace, "rt_tgsigqueueinfo({}, {}, {}, si_code {})", pid, tid, describe_signal(si.si_signo),
             si.si_code);
  siginfo_t copy = si;  // (the kernel takes a non-const pointer)
  if (::syscall(SYS_rt_tgsigqueueinfo, pid, tid, si.si_signo, &copy) == 0) {
    return base::success();
  }
  return ptrace_error("rt_tgsigqueueinfo", tid, errno);
}

const char* describe_signal(int sig) {
  const char* name = ::sigabbrev_np(sig);
  return name != nullptr ? name : "?";
}

}  // namespace tracer::pt
