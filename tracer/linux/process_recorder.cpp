#include "tracer/linux/process_recorder.hpp"

#include "arch/x86/register_layout.hpp"
#include "base/log.hpp"
#include <unistd.h>

#include <fmt/format.h>

#include "tracer/inprocess/recorder/recorder_api.h"
#include "tracer/linux/call_refusal.hpp"
#include "tracer/linux/process.hpp"
#include "tracer/linux/procfs.hpp"
#include "tracer/linux/recorder_seccomp.hpp"
#include "tracer/linux/svr4_libraries.hpp"

namespace tracer {
namespace {

// pid has a dynamic linker (auxv: AT_BASE) that has not mapped libc yet: right after an exec.
bool libc_to_come(Kernel& kernel, Pid pid) {
  auto auxv = kernel.auxv(pid);
  if (!auxv || svr4::parse_auxv(*auxv).interpreter == 0) {
    return false;
  }
  for (const MappedObject& m : procfs::mappings(pid)) {
    if (m.path.find("/libc.so") != std::string::npos) {
      return false;
    }
  }
  return true;
}

}  // namespace

std::vector<Addr> ProcessRecorder::int3_sites() const {
  std::vector<Addr> out;
  for (const auto& [addr, site] : p_.code.sites()) {
    // (Not the collector's own at the program's entry, which only a native run needs: its
    // coming and going makes no translation stale.)
    if (site.owners != static_cast<std::uint8_t>(SiteOwner::Collector)) {
      out.push_back(addr);
    }
  }
  return out;
}

void ProcessRecorder::send_again(const std::vector<HeldSignal>& signals) {
  tracer::send_again(p_.kernel, p_.pid, signals);
}

base::Result<void> ProcessRecorder::enter(Tid tid, std::uint64_t ring_samples) {
  if (load_failed_) {
    return *load_failed_;
  }
  if (!handed_over(tid)) {
    // The dynamic linker is still at work (mapping and relocating libraries): the recorder comes
    // in at the program's entry, not for ld.so's start-up.
    return base::make_error(base::Errc::not_yet, "the dynamic linker has not handed over to the program yet");
  }
  // (Asked only where a call would be needed: not on every entry.)
  auto calls_refused = [&]() -> base::Result<void> {
    if (auto why = call_refused(p_.kernel, tid)) {
      return base::make_error(base::Errc::not_yet, *why);
    }
    return base::success();
  };
  if (!link_ || !link_->knows(tid)) {
    if (auto ok = calls_refused(); !ok) {
      return ok;  // (the recorder to load or settle, the thread's block to make)
    }
  }
  if (!link_ && inherited_) {
    if (auto settled = inherited_->settle_in_fork_child(tid); !settled) {
      load_failed_ = settled.error();
      base::logf(base::LogCat::ptrace, "fork child {}: its copy of the in-process recorder cannot record: {}", p_.pid,
                 settled.error().message());
      return settled;
    }
    link_ = std::move(inherited_);
    inherited_.reset();
    translated_with_ = int3_sites();
  }
  if (!link_) {
    auto loaded = RecorderLink::load(p_.kernel, p_.pid, tid, library_);
    if (!loaded) {
      load_failed_ = loaded.error();
      base::logf(base::LogCat::ptrace, "process {}: the in-process recorder cannot come in: {}", p_.pid,
                 loaded.error().message());
      return loaded.error();
    }
    link_.emplace(std::move(*loaded));
    translated_with_ = int3_sites();
    base::logf(base::LogCat::ptrace, "process {}: the in-process recorder is in ({})", p_.pid, library_);
  }
  if (auto flushed = flush_if_stale(tid); !flushed) {
    return flushed;
  }
  if (auto told = link_->set_syscalls_caught(p_.catch_syscalls.enabled); !told) {
    return told;
  }
  auto entered = link_->enter(tid, ring_samples);
  send_again(link_->take_held());  // (came while a call above ran: delivered as it runs)
  return entered;
}

base::Result<void> ProcessRecorder::flush_if_stale(Tid caller) {
  if (!link_ || link_->any_inside()) {
    return base::success();  // (flushed at an entry once they are all out)
  }
  auto sites = int3_sites();
  if (sites == translated_with_ && !code_written_ && !link_->cache_stale()) {
    return base::success();
  }
  if (auto why = call_refused(p_.kernel, caller)) {
    return base::make_error(base::Errc::not_yet, *why);
  }
  // The cache holds code as it was (an int3 that is no longer there, none where one is now,
  // a library unmapped, code reprotected and rewritten).
  auto flushed = link_->flush(caller);
  send_again(link_->take_held());
  if (!flushed) {
    return flushed;
  }
  translated_with_ = std::move(sites);
  code_written_ = false;
  return base::success();
}

void ProcessRecorder::inherit(const RecorderPort& parent) {
  const auto& of = static_cast<const ProcessRecorder&>(parent);  // (ports of one kind: the core's host makes them)
  if (of.link_) {
    inherited_.emplace(of.link_->for_fork_child(p_.pid));
  }
}

void ProcessRecorder::exec_happened() {
  // (Nothing to unload: it went with the old image, rings and all, as the server's mappings of
  // them stay until the link goes.)
  link_.reset();
  inherited_.reset();
  load_failed_.reset();
  translated_with_.clear();
  code_written_ = false;
  handover_.reset();
}

Tid ProcessRecorder::caller() const {
  Tid caller = 0;  // a stopped thread: one where a call may run, if there is one
  for (const auto& [tid, t] : p_.threads) {
    if (!t.stopped()) {
      continue;
    }
    if (!call_refused(p_.kernel, tid)) {
      return tid;
    }
    caller = caller != 0 ? caller : tid;
  }
  return caller;
}

base::Result<void> ProcessRecorder::refresh() {
  const Tid on = caller();
  if (on == 0) {
    return base::make_error(base::Errc::not_yet, "no stopped thread");
  }
  return flush_if_stale(on);
}

std::optional<std::string> ProcessRecorder::unfit(Tid tid) {
  if (library_.empty() || ::access(library_.c_str(), R_OK) != 0) {
    return std::string(HS_RECORDER_LIBRARY) + " is not installed beside this hindsight";
  }
  if (p_.isa != arch::x86::Isa::Amd64) {
    return "a 32-bit program: the recorder is 64-bit code";
  }
  const int seccomp = procfs::seccomp_mode(p_.pid);
  if (seccomp == 1) {
    return "the program runs in seccomp's strict mode, which kills it at any system call but read, write, exit "
           "and sigreturn";
  }
  if (seccomp == 2) {
    // (A filter, as containers have, is read and run on the recorder's calls.)
    if (auto refused = seccomp_refusal(tid)) {
      return refused;
    }
  }
  // What the recorder maps for itself and a few threads (its image, two code cache regions, its
  // tables, each thread's ring, stack and lookup table: some 60 MiB), with room to spare: under
  // a tighter RLIMIT_AS it would take what the program's own mmap needs.
  constexpr std::uint64_t kRecorderAddressSpace = 128ull << 20;
  if (auto room = procfs::address_space_room(p_.pid); room && *room < kRecorderAddressSpace) {
    return fmt::format("the program's address space limit (RLIMIT_AS) leaves {} MiB free, and the recorder "
                       "maps some 60 MiB of its own",
                       *room >> 20);
  }
  return std::nullopt;
}

std::optional<Addr> ProcessRecorder::comes_in_at() {
  return handover_ahead() ? handover_->entry : std::optional<Addr>{};
}

bool ProcessRecorder::handover_ahead() {
  if (!handover_) {
    handover_.emplace();
    if (libc_to_come(p_.kernel, p_.pid)) {  // (set up right after an exec)
      if (auto auxv = p_.kernel.auxv(p_.pid)) {
        const svr4::AuxvInfo info = svr4::parse_auxv(*auxv);
        handover_->entry = info.entry;
        if (auto linker = procfs::mapping_at(p_.pid, info.interpreter)) {
          handover_->linker = linker->path;
        }
      }
    }
  }
  return handover_->entry != 0;
}

bool ProcessRecorder::handed_over(Tid tid) {
  if (!handover_ahead()) {
    return true;
  }
  arch::x86::RawRegisters regs;
  if (!p_.kernel.read_gprs(tid, regs)) {
    return false;
  }
  auto at = procfs::mapping_at(p_.pid, regs.gpr[arch::x86::kRip]);
  if (!at || at->path == handover_->linker) {
    return false;
  }
  handover_->entry = 0;  // (once past it, for good)
  return true;
}

base::Result<RecorderLeft> ProcessRecorder::leave(Tid tid) {
  if (!inside(tid)) {
    return RecorderLeft{};
  }
  auto held = link_->leave({tid});
  if (!held) {
    return held.error();
  }
  send_again(*held);
  const LeftAt at = link_->left_at(tid);
  return RecorderLeft{at.pc, at.ran_native, at.exited_at, at.trapped};
}

base::Result<RecorderSyscall> ProcessRecorder::at_syscall(Tid tid, bool move) {
  if (!link_ || !link_->recording(tid)) {
    return RecorderSyscall{};
  }
  auto of = link_->at_syscall(tid, move);
  if (!of) {
    return of.error();
  }
  RecorderSyscall out;
  out.recorders_own = *of == RecorderLink::SyscallOf::recorder;
  if (!link_->recording(tid)) {
    const LeftAt at = link_->left_at(tid);
    out.left = RecorderLeft{at.pc, at.ran_native, at.exited_at};
  }
  return out;
}

base::Result<std::optional<Addr>> ProcessRecorder::out_at_birth(Tid parent, Tid child) {
  if (!link_) {
    return std::optional<Addr>{};
  }
  auto moved = link_->leave_from_syscall(parent);
  if (!moved) {
    return moved.error();
  }
  if (!*moved) {
    return std::optional<Addr>{};
  }
  arch::x86::RawRegisters regs;
  if (auto r = p_.kernel.read_gprs(child, regs); r && regs.gpr[arch::x86::kRip] == (*moved)->from) {
    regs.gpr[arch::x86::kRip] = (*moved)->to;
    regs.gpr[arch::x86::kGsBase] = (*moved)->gs_base;
    if (auto w = p_.kernel.write_registers(child, regs, false); !w) {
      base::logf(base::LogCat::ptrace, "child {}: not moved out of the recorder: {}", child, w.error().message());
    }
  } else {
    base::logf(base::LogCat::ptrace, "child {}: not where its parent was in the recorder (moved out already, or not stopped yet)", child);
  }
  return std::optional<Addr>{(*moved)->to};
}

base::Result<RecordedBranches> ProcessRecorder::take(Tid tid) {
  if (!link_) {
    return RecordedBranches{};
  }
  auto taken = link_->take(tid);
  if (!taken) {
    return taken.error();
  }
  return RecordedBranches{std::move(taken->samples), taken->lost};
}

base::Result<void> ProcessRecorder::unload() {
  if (!link_ && !inherited_) {
    return base::success();
  }
  const Tid caller = this->caller();
  if (caller == 0) {
    return base::make_error(base::Errc::invalid, "no stopped thread");
  }
  if (!link_ && inherited_) {
    // A fork child's dormant copy of its parent's recorder (it never recorded): settled first (a
    // copy of the translation lock, descriptors not closed yet), then taken out as any.
    if (auto why = call_refused(p_.kernel, caller)) {
      return base::make_error(base::Errc::not_yet, *why);
    }
    auto settled = inherited_->settle_in_fork_child(caller);
    if (!settled) {
      return settled;
    }
    link_ = std::move(inherited_);
    inherited_.reset();
  }
  if (!link_) {
    return base::success();
  }
  std::vector<Tid> tids;
  for (const auto& [tid, t] : p_.threads) {
    tids.push_back(tid);
  }
  auto held = link_->leave(tids);
  if (!held) {
    return held.error();
  }
  send_again(*held);
  auto unloaded = link_->unload(caller);
  send_again(link_->take_held());
  link_.reset();
  if (unloaded) {
    base::logf(base::LogCat::ptrace, "process {}: the in-process recorder is out", p_.pid);
  }
  return unloaded;
}

RecorderPortMaker recorder_port_maker(std::string library) {
  return [library = std::move(library)](CollectorHost& host) -> std::unique_ptr<RecorderPort> {
    auto* view = dynamic_cast<ProcessCodeView*>(&host);
    return view != nullptr ? std::make_unique<ProcessRecorder>(view->process(), library) : nullptr;
  };
}

}  // namespace tracer
