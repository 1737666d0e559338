// LinuxTarget: construction, thread bookkeeping, and the calls that only read or write
// a stopped process (registers, memory, breakpoints, auxv, siginfo, libraries).
#include "tracer/linux/linux_target.hpp"

#include <sys/signalfd.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstring>

#include "base/log.hpp"
#include "tracer/linux/procfs.hpp"
#include "tracer/linux/ptrace_calls.hpp"
#include "tracer/linux/registers.hpp"
#include "tracer/linux/svr4_libraries.hpp"

namespace tracer {
namespace {

base::Error no_process_error() { return base::make_error(base::Errc::no_process, "no process"); }

}  // namespace

LinuxTarget::LinuxTarget() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGCHLD);
  sigprocmask(SIG_BLOCK, &set, nullptr);
  sfd_ = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
}

LinuxTarget::~LinuxTarget() {
  if (has_process()) {
    if (attached_) {
      (void)detach();
    } else {
      (void)kill();
    }
  }
  if (sfd_ >= 0) {
    ::close(sfd_);
  }
}

LinuxTarget::Thread* LinuxTarget::find(Tid tid) {
  auto it = threads_.find(tid);
  return it == threads_.end() ? nullptr : &it->second;
}

LinuxTarget::Thread& LinuxTarget::add_thread(Tid tid) {
  Thread& t = threads_[tid];
  t.tid = tid;
  return t;
}

void LinuxTarget::forget_process() {
  threads_.clear();
  breakpoints_.clear();
  forget_btrace(0);
  dr_slots_ = arch::x86::DebugSlots{};
  memory_.close();
  pid_ = 0;
  attached_ = false;
  running_ = false;
  stopping_ = false;
  interrupt_requested_ = false;
}

Result<Tid> LinuxTarget::any_stopped_tid() const {
  if (!has_process()) {
    return no_process_error();
  }
  if (auto it = threads_.find(pid_); it != threads_.end() && it->second.stopped) {
    return pid_;
  }
  for (const auto& [tid, t] : threads_) {
    if (t.stopped) {
      return tid;
    }
  }
  return base::make_error(base::Errc::no_thread, "no stopped thread");
}

Result<LinuxTarget::Thread*> LinuxTarget::stopped_thread(Tid tid) {
  if (!has_process()) {
    return no_process_error();
  }
  Thread* t = find(tid);
  if (t == nullptr) {
    return base::make_error(base::Errc::no_thread, "no thread " + std::to_string(tid));
  }
  if (!t->stopped) {
    return base::make_error(base::Errc::invalid, "thread " + std::to_string(tid) + " is running");
  }
  return t;
}

std::vector<ThreadInfo> LinuxTarget::threads() {
  std::vector<ThreadInfo> out;
  for (const auto& [tid, t] : threads_) {
    if (!t.seen_initial_stop) {
      continue;  // not started yet
    }
    ThreadInfo info;
    info.tid = tid;
    info.name = procfs::thread_name(pid_, tid);
    if (auto st = procfs::task_stat(pid_, tid)) {
      info.core = st->core;
    }
    out.push_back(std::move(info));
  }
  // The leader first, as in gdbserver's list.
  std::stable_partition(out.begin(), out.end(), [this](const ThreadInfo& i) { return i.tid == pid_; });
  return out;
}

bool LinuxTarget::thread_alive(Tid tid) {
  return has_process() && find(tid) != nullptr && pt::tgkill(pid_, tid, 0).ok();
}

Result<std::string> LinuxTarget::target_description(const std::string& annex) {
  if (annex != "target.xml") {
    return base::make_error(base::Errc::invalid, "unknown annex " + annex);
  }
  auto tid = any_stopped_tid();
  if (!tid) {
    return std::move(tid).error();
  }
  return target_description_xml(*tid);
}

Result<Bytes> LinuxTarget::read_registers(Tid tid) {
  auto t = stopped_thread(tid);
  if (!t) {
    return std::move(t).error();
  }
  return read_g_registers(tid);
}

Result<void> LinuxTarget::write_registers(Tid tid, const Bytes& regs) {
  auto t = stopped_thread(tid);
  if (!t) {
    return std::move(t).error();
  }
  return write_g_registers(tid, regs);
}

Result<Bytes> LinuxTarget::read_register(Tid tid, int regno) {
  auto t = stopped_thread(tid);
  if (!t) {
    return std::move(t).error();
  }
  return read_one_register(tid, regno);
}

Result<void> LinuxTarget::write_register(Tid tid, int regno, const Bytes& value) {
  auto t = stopped_thread(tid);
  if (!t) {
    return std::move(t).error();
  }
  return write_one_register(tid, regno, value);
}

Result<Bytes> LinuxTarget::read_memory(Addr addr, std::size_t len) {
  if (!has_process()) {
    return no_process_error();
  }
  auto data = memory_.read(addr, len);
  if (data) {
    breakpoints_.hide(addr, *data);
  }
  return data;
}

Result<void> LinuxTarget::write_memory(Addr addr, const Bytes& data) {
  if (!has_process()) {
    return no_process_error();
  }
  SoftwareBreakpoints saved = breakpoints_;
  Bytes bytes = data;
  breakpoints_.absorb_write(addr, bytes);
  insn_cache_.clear();  // the code may have changed
  auto res = memory_.write(addr, bytes);
  if (!res) {
    breakpoints_ = std::move(saved);
  }
  return res;
}

Result<void> LinuxTarget::insert_breakpoint(BreakpointType type, Addr addr, int len) {
  if (!has_process()) {
    return no_process_error();
  }
  if (type != BreakpointType::Software) {
    return insert_debug_point(type, addr, len);
  }
  if (breakpoints_.contains(addr)) {
    return base::success();
  }
  auto orig = memory_.read(addr, 1);
  if (!orig) {
    return std::move(orig).error();
  }
  auto res = memory_.write(addr, Bytes{kInt3});
  if (!res) {
    return res;
  }
  breakpoints_.add(addr, (*orig)[0]);
  base::logf(base::LogCat::ptrace, "int3 at {:#x} (was {:#04x})", addr, (*orig)[0]);
  return base::success();
}

Result<void> LinuxTarget::remove_breakpoint(BreakpointType type, Addr addr, int len) {
  if (!has_process()) {
    return no_process_error();
  }
  if (type != BreakpointType::Software) {
    return remove_debug_point(type, addr, len);
  }
  auto orig = breakpoints_.release(addr);
  if (!orig) {
    return base::success();
  }
  return memory_.write(addr, Bytes{*orig});
}

Result<Bytes> LinuxTarget::auxv() {
  if (!has_process()) {
    return no_process_error();
  }
  return procfs::read_file("/proc/" + std::to_string(pid_) + "/auxv");
}

Result<std::string> LinuxTarget::exec_file(Pid pid) {
  if (pid == 0) {
    if (!has_process()) {
      return no_process_error();
    }
    pid = pid_;
  }
  const std::string link = "/proc/" + std::to_string(pid) + "/exe";
  std::string buf(4096, '\0');
  ssize_t n = ::readlink(link.c_str(), buf.data(), buf.size());
  if (n < 0) {
    if (errno == ENOENT) {
      return base::make_error(base::Errc::no_process, "no such process " + std::to_string(pid));
    }
    return base::sys_error("readlink " + link);
  }
  buf.resize(static_cast<std::size_t>(n));
  return buf;
}

Result<LibraryList> LinuxTarget::libraries() {
  auto aux = auxv();
  if (!aux) {
    return std::move(aux).error();
  }
  return svr4::read_libraries([this](Addr a, std::size_t n) { return read_memory(a, n); }, *aux);
}

Result<Bytes> LinuxTarget::siginfo(Tid tid) {
  auto t = stopped_thread(tid);
  if (!t) {
    return std::move(t).error();
  }
  auto si = pt::get_siginfo(tid);
  if (!si) {
    return std::move(si).error();
  }
  Bytes out(sizeof(siginfo_t));
  std::memcpy(out.data(), &*si, out.size());
  return out;
}

Result<void> LinuxTarget::write_siginfo(Tid tid, const Bytes& data) {
  auto t = stopped_thread(tid);
  if (!t) {
    return std::move(t).error();
  }
  if (data.size() > sizeof(siginfo_t)) {
    return base::make_error(base::Errc::invalid, "siginfo larger than 128 bytes");
  }
  auto si = pt::get_siginfo(tid);
  if (!si) {
    return std::move(si).error();
  }
  std::memcpy(&*si, data.data(), data.size());
  return pt::set_siginfo(tid, *si);
}

}  // namespace tracer
