// LinuxTarget: lookups, and the calls that only read or write a stopped process (registers,
// memory, breakpoints, auxv, siginfo, libraries).
#include "tracer/linux/linux_target.hpp"

#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstring>

#include "base/log.hpp"
#include "arch/x86/i386_siginfo.hpp"
#include "tracer/linux/procfs.hpp"
#include "tracer/linux/ptrace_calls.hpp"
#include "tracer/linux/registers.hpp"
#include "tracer/linux/svr4_libraries.hpp"

namespace tracer {
namespace {

base::Error no_process_error() { return base::make_error(base::Errc::no_process, "no process"); }

}  // namespace

LinuxTarget::~LinuxTarget() { kill_all(true); }

// --- lookups ------------------------------------------------------------------------------

Process* LinuxTarget::process(Pid pid) {
  auto it = processes_.find(pid);
  return it == processes_.end() ? nullptr : it->second.get();
}

Process* LinuxTarget::current() { return process(current_); }

LinuxTarget::Located LinuxTarget::locate(Tid tid) {
  if (Process* p = process(tid)) {  // the leader: the common case
    if (LinuxThread* t = p->find(tid)) {
      return {p, t};
    }
  }
  for (auto& [pid, p] : processes_) {
    if (LinuxThread* t = p->find(tid)) {
      return {p.get(), t};
    }
  }
  return {};
}

Result<LinuxTarget::Located> LinuxTarget::stopped_thread(Tid tid) {
  if (!has_process()) {
    return no_process_error();
  }
  Located at = locate(tid);
  if (at.thread == nullptr) {
    return base::make_error(base::Errc::no_thread, "no thread " + std::to_string(tid));
  }
  if (!at.thread->stopped()) {
    return base::make_error(base::Errc::invalid, "thread " + std::to_string(tid) + " is running");
  }
  return at;
}

Process& LinuxTarget::add_process(Pid pid, ProcessOrigin origin) {
  auto p = std::make_unique<Process>(kernel_);
  p->pid = pid;
  p->origin = origin;
  p->attached = origin == ProcessOrigin::Attached;
  p->isa = procfs::executable_isa(pid);
  open_memory(*p);
  Process& ref = *p;
  processes_[pid] = std::move(p);
  return ref;
}

void LinuxTarget::open_memory(Process& p) {
  auto memory = kernel_.memory(p.pid);
  if (!memory) {
    base::logf(base::LogCat::ptrace, "{}", memory.error().message());
    p.code.use(nullptr);
    return;
  }
  p.code.use(std::move(*memory));
}

bool LinuxTarget::gone(Pid pid, Tid tid) {
  const char state = kernel_.task_state(pid, tid);
  return state == 'Z' || state == 'X';
}

void LinuxTarget::forget_process(Pid pid) {
  if (auto it = processes_.find(pid); it != processes_.end() && it->second->collector) {
    Process& p = *it->second;
    p.collector->process_gone();
    if (keep_ended_histories_) {
      for (const auto& [tid, thread] : p.threads) {
        p.collector->thread_exited(tid);  // its history, read-only from now on
      }
      ended_collectors_[pid] = std::move(p.collector);
    }
  }
  processes_.erase(pid);
  if (current_ == pid) {
    current_ = 0;
    for (auto& [other, p] : processes_) {
      if (p->known_to_gdb) {
        current_ = other;
        break;
      }
    }
  }
}

std::vector<std::pair<Tid, BranchTracer*>> LinuxTarget::ended_histories(Pid pid) {
  std::vector<std::pair<Tid, BranchTracer*>> out;
  auto it = ended_collectors_.find(pid);
  if (it != ended_collectors_.end()) {
    for (const Tid tid : it->second->recorded_threads()) {
      out.emplace_back(tid, it->second->tracer(tid));
    }
  }
  return out;
}

bool LinuxTarget::attached() const {
  auto it = processes_.find(current_);
  return it != processes_.end() && it->second->attached;
}

bool LinuxTarget::attached_process(Pid pid) {
  Process* p = process(pid);
  return p != nullptr && p->attached;
}

std::vector<Pid> LinuxTarget::processes() {
  std::vector<Pid> out;
  for (const auto& [pid, p] : processes_) {
    if (p->known_to_gdb) {
      out.push_back(pid);
    }
  }
  return out;
}

Result<void> LinuxTarget::select_process(Pid pid) {
  Process* p = process(pid);
  if (p == nullptr) {
    return base::make_error(base::Errc::no_process, "no such process " + std::to_string(pid));
  }
  current_ = pid;
  return base::success();
}

std::vector<ThreadInfo> LinuxTarget::threads() {
  std::vector<ThreadInfo> out;
  for (auto& [pid, p] : processes_) {
    if (!p->known_to_gdb) {
      continue;  // a fork child GDB has not been told of
    }
    notice_zombie_leader(*p);
    const std::size_t first = out.size();
    for (const auto& [tid, t] : p->threads) {
      if (t.state() == ThreadState::Zombie) {
        continue;  // a leader gone before its threads
      }
      // (A thread before its first stop is listed, running, as gdbserver lists it from the
      // clone event on: in non-stop GDB may ask before that stop arrives.)
      ThreadInfo info;
      info.pid = pid;
      info.tid = tid;
      if (auto st = procfs::task_stat(pid, tid)) {  // one read for the name and the core
        info.name = std::move(st->name);
        info.core = st->core;
      }
      info.resumed = t.gdb.resumed();
      out.push_back(std::move(info));
    }
    // The leader first, as in gdbserver's list.
    std::stable_partition(out.begin() + static_cast<std::ptrdiff_t>(first), out.end(),
                          [pid = pid](const ThreadInfo& i) { return i.tid == pid; });
  }
  return out;
}

bool LinuxTarget::thread_alive(Tid tid) {
  Located at = locate(tid);
  if (at.thread != nullptr && tid == at.process->pid) {
    notice_zombie_leader(*at.process);
  }
  if (at.thread != nullptr && at.process->ended) {
    return true;  // until GDB hears how its process ended
  }
  return at.thread != nullptr && at.process->known_to_gdb && at.thread->state() != ThreadState::Zombie &&
         kernel_.tgkill(at.process->pid, tid, 0).ok();
}

// --- registers ----------------------------------------------------------------------------

Result<std::string> LinuxTarget::target_description(const std::string& annex) {
  if (annex != "target.xml") {
    return base::make_error(base::Errc::invalid, "unknown annex " + annex);
  }
  Process* p = current();
  if (p == nullptr) {
    return no_process_error();
  }
  // The layout is the CPU's for the program's instruction set: no thread needs to be stopped
  // (non-stop attach asks while the threads run).
  return target_description_xml(p->isa);
}

Result<Bytes> LinuxTarget::read_registers(Tid tid) {
  Located running = locate(tid);
  if (running.thread != nullptr && running.thread->run.running() && running.process->collector && !all_stop()) {
    // GDB adds the pc of a thread it hears of while recording as the start of its history, and
    // asks before it marks the thread running (non-stop): read at a moment's stop, as it runs,
    // instead of the error that ends the thread's recording (GDB's "Could not read registers").
    Result<Bytes> regs = base::make_error(base::Errc::invalid, "thread " + std::to_string(tid) + " is running");
    (void)with_threads_paused(*running.process, [&](Tid t) { return t == tid; }, [&] {
      if (auto at = stopped_thread(tid)) {
        regs = read_g_registers(host_register_layout(at->process->isa), tid, at->thread->regs);
      }
    });
    return regs;
  }
  auto at = stopped_thread(tid);
  if (!at) {
    return std::move(at).error();
  }
  return read_g_registers(host_register_layout(at->process->isa), tid, at->thread->regs);
}

Result<Target::RegisterPlace> LinuxTarget::register_place(Tid tid, int regno) {
  const arch::x86::RegisterLayout& layout = host_register_layout(isa(tid));
  const arch::x86::RegisterInfo* info = layout.find(regno);
  if (info == nullptr) {
    return base::make_error(base::Errc::invalid, fmt::format("no register {}", regno));
  }
  return RegisterPlace{info->g_offset, info->size, layout.g_size()};
}

Result<void> LinuxTarget::write_registers(Tid tid, const Bytes& regs) {
  auto at = stopped_thread(tid);
  if (!at) {
    return std::move(at).error();
  }
  return write_g_registers(host_register_layout(at->process->isa), tid, at->thread->regs, regs);
}

Result<Bytes> LinuxTarget::read_register(Tid tid, int regno) {
  auto at = stopped_thread(tid);
  if (!at) {
    return std::move(at).error();
  }
  return read_one_register(host_register_layout(at->process->isa), tid, at->thread->regs, regno);
}

Result<void> LinuxTarget::write_register(Tid tid, int regno, const Bytes& value) {
  auto at = stopped_thread(tid);
  if (!at) {
    return std::move(at).error();
  }
  return write_one_register(host_register_layout(at->process->isa), tid, at->thread->regs, regno, value);
}

arch::x86::Isa LinuxTarget::isa(Tid tid) {
  const Located at = locate(tid);
  return at.process != nullptr ? at.process->isa : arch::x86::Isa::Amd64;
}

// --- memory and breakpoints of the current process -------------------------------------------

Result<Bytes> LinuxTarget::read_memory(Addr addr, std::size_t len) {
  Process* p = current();
  if (p == nullptr) {
    return no_process_error();
  }
  return p->code.read(addr, len);
}

Result<void> LinuxTarget::write_memory(Addr addr, const Bytes& data) {
  Process* p = current();
  if (p == nullptr) {
    return no_process_error();
  }
  if (p->collector) {
    p->collector->code_changed();
  }
  auto written = p->code.write(addr, data);
  collector_code_edited(*p);
  return written;
}

Result<void> LinuxTarget::insert_breakpoint(BreakpointType type, Addr addr, int len) {
  Process* p = current();
  if (p == nullptr) {
    return no_process_error();
  }
  if (type != BreakpointType::Software) {
    return insert_debug_point(*p, type, addr, len);
  }
  auto planted = p->code.plant(addr, SiteOwner::Gdb);
  if (!planted) {
    return std::move(planted).error();
  }
  base::logf(base::LogCat::ptrace, "int3 at {:#x} in {}{}", addr, p->pid,
             *planted == CodeMemory::Planted::Present ? " (there already)" : "");
  if (*planted != CodeMemory::Planted::Present) {
    collector_code_edited(*p);
  }
  return base::success();
}

Result<void> LinuxTarget::remove_breakpoint(BreakpointType type, Addr addr, int len) {
  Process* p = current();
  if (p == nullptr) {
    return no_process_error();
  }
  if (type != BreakpointType::Software) {
    return remove_debug_point(*p, type, addr, len);
  }
  p->conditions.erase(addr);
  p->commands.erase(addr);
  // A breakpoint whose page is gone cannot be removed: GDB warns ("Error removing breakpoint").
  auto removed = p->code.unplant(addr, SiteOwner::Gdb);
  collector_code_edited(*p);
  return removed ? base::success() : Result<void>(std::move(removed).error());
}

// --- what GDB asks about the process -----------------------------------------------------------

Result<Bytes> LinuxTarget::auxv() {
  if (current() == nullptr) {
    return no_process_error();
  }
  return kernel_.auxv(current_);
}

Result<std::string> LinuxTarget::exec_file(Pid pid) {
  if (pid == 0) {
    if (current() == nullptr) {
      return no_process_error();
    }
    pid = current_;
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
  return svr4::read_libraries([this](Addr a, std::size_t n) { return read_memory(a, n); }, *aux,
                              arch::x86::register_roles(current()->isa).word_bytes);
}

Result<Bytes> LinuxTarget::siginfo(Tid tid) {
  auto at = stopped_thread(tid);
  if (!at) {
    return std::move(at).error();
  }
  auto si = kernel_.get_siginfo(tid);
  if (!si) {
    return std::move(si).error();
  }
  arch::x86::SiginfoBytes native{};
  static_assert(sizeof(siginfo_t) == native.size());
  std::memcpy(native.data(), &*si, native.size());
  if (at->process->isa == arch::x86::Isa::I386) {  // as the program's own handler sees it
    native = arch::x86::i386_siginfo_from_native(native);
  }
  return Bytes(native.begin(), native.end());
}

Result<void> LinuxTarget::write_siginfo(Tid tid, const Bytes& data) {
  auto at = stopped_thread(tid);
  if (!at) {
    return std::move(at).error();
  }
  if (data.size() > sizeof(siginfo_t)) {
    return base::make_error(base::Errc::invalid, "siginfo larger than 128 bytes");
  }
  auto si = kernel_.get_siginfo(tid);
  if (!si) {
    return std::move(si).error();
  }
  // GDB writes (a prefix of) what it read: the program's layout.
  const bool i386 = at->process->isa == arch::x86::Isa::I386;
  arch::x86::SiginfoBytes image{};
  std::memcpy(image.data(), &*si, image.size());
  if (i386) {
    image = arch::x86::i386_siginfo_from_native(image);
  }
  std::copy(data.begin(), data.end(), image.begin());
  if (i386) {
    image = arch::x86::native_siginfo_from_i386(image);
  }
  std::memcpy(&*si, image.data(), image.size());
  return kernel_.set_siginfo(tid, *si);
}

}  // namespace tracer
