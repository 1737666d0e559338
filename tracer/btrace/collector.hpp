// The one seam between the tracer core and a history collector (PerfBtsCollector,
// SoftStepCollector, SoftEmulateCollector; the dbt recorder is none: it records inside Valgrind,
// behind ValgrindTarget). The core tells a collector what happens to the threads of the process
// it records; the collector asks the core only through CollectorHost. Pure interface: no
// <sys/*>, no ptrace here, so a collector can be tested against a fake host.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <span>
#include <string_view>
#include <vector>

#include "arch/x86/branch_emulation.hpp"
#include "base/result.hpp"
#include "tracer/btrace/branch_tracer.hpp"
#include "tracer/btrace/recorder_port.hpp"
#include "tracer/btrace/scope.hpp"
#include "tracer/types.hpp"

namespace tracer {

// What plant() found at the address.
enum class Planted {
  Fresh,    // an int3 put there now
  Present,  // our int3 was there already
  Stale,    // the run's code is not what the collector decoded, or the table had an int3
            // there but memory did not (code rewritten, a library mapped again): nothing
            // planted; what the collector learnt of that code is out of date
};

// What a collector may ask of the core about a stopped thread of its process.
class CollectorHost {
 public:
  virtual ~CollectorHost() = default;
  virtual base::Result<Addr> pc(Tid tid) = 0;
  // Code bytes as the program wrote them (the core's int3s hidden).
  virtual base::Result<Bytes> read_code(Addr addr, std::size_t len) = 0;
  // si_code of the signal the thread stopped with (SIGTRAP: TRAP_TRACE, SI_KERNEL, ...).
  virtual base::Result<int> stop_si_code(Tid tid) = 0;
  // One of the core's int3s (GDB's breakpoints, step-overs) is at addr.
  virtual bool is_breakpoint_site(Addr addr) const = 0;
  // The instruction set of the process's code (how it decodes); it may change at an exec,
  // which code_changed() follows.
  virtual arch::x86::Isa isa() const { return arch::x86::Isa::Amd64; }

  // For collectors that perform instructions themselves (SoftEmulate):
  // the general registers of a stopped thread, and writing them back;
  virtual base::Result<arch::x86::Gprs> registers(Tid tid) = 0;
  virtual base::Result<void> set_registers(Tid tid, const arch::x86::Gprs& gpr) = 0;
  // inferior memory, the core's int3s hidden on reads and kept on writes;
  virtual base::Result<void> write_memory(Addr addr, const Bytes& data) = 0;
  // an int3 of the collector's at addr, shared by every thread of the address space, until
  // tracing stops, for a run from run_start whose bytes [run_start, addr) the collector
  // decoded as run_code (Stale when memory holds something else now). The core hands each
  // trap on it to at_site().
  virtual base::Result<Planted> plant(Addr addr, Addr run_start, std::span<const std::uint8_t> run_code) = 0;

  // For --btrace-scope: the object mapped at addr, and the process's executable.
  virtual base::Result<MappedObject> mapped_object(Addr addr) {
    (void)addr;
    return base::make_error(base::Errc::unsupported, "no memory map");
  }
  virtual std::string executable() { return {}; }

  // Whether its threads stop at system calls (catch syscall: for the in-process recorder, a stop
  // there is no place to leave the cache).
  virtual bool stops_at_syscalls() const { return false; }
};

// What the collector did with a thread standing on one of its int3s.
enum class SiteVerdict {
  Performed,  // it performed the instruction there: the thread is past it, registers written
  StepOver,   // the core must step over it (the original byte back for one single-step)
};

// Whose a stop is, by thread_stopped.
enum class StopMeaning {
  Program,  // the program's, or the core's: classified as ever
  OwnEdit,  // the collector's own (its code asked for it): unreported; the collector's code is
            // made afresh with its threads paused (code_edited), then the thread goes on
};

// What the collector makes of a SIGTRAP stop of a thread it asked to single-step.
enum class StepVerdict {
  NotMine,  // not the step's trap (the program's own int3, a SIGTRAP sent to it): classify it
  Stepped,  // one step done and recorded; the core decides whether the thread goes on
};

class Collector {
 public:
  virtual ~Collector() = default;
  // "bts", "step", ...: the backend's name (tracer/backend.hpp), what `monitor btrace` and errors name.
  virtual std::string_view backend() const = 0;
  // It records inside the process, with a recorder of its own brought in
  // (CollectorSetup::recorder_port).
  virtual bool records_in_process() const { return false; }

  // Tracing starts for a thread (Qbtrace:bts, or a thread born while the process records).
  virtual base::Result<void> start(Tid tid, const BtraceConfig& config) = 0;
  // Tracing stops for a thread (Qbtrace:off). Its history goes.
  virtual void stop(Tid tid) = 0;
  // The thread exited: its history is kept, read-only, until stop() or forget_retired().
  virtual void thread_exited(Tid tid) = 0;
  // The thread's tracer while tracing is on, else nullptr.
  virtual BranchTracer* tracer(Tid tid) = 0;
  virtual bool tracing(Tid tid) const = 0;
  // Threads whose tracer is on, and those whose history outlived them.
  virtual std::size_t traced_count() const = 0;
  // Every thread with a history here: traced now, or exited while traced.
  virtual std::vector<Tid> recorded_threads() const = 0;
  virtual std::size_t retired_count() const = 0;
  virtual void forget_retired() = 0;

  // The core is about to resume traced tid at pc delivering sig (0: none); core_steps: with a
  // single-step of its own (GDB's step, a step-over). True: resume it with a single-step
  // instead of letting it run (SoftStep); the core then reports the step's trap through
  // stepped() and resumes again until the thread's own action is done. False: it runs (a
  // collector may plant int3s ahead of it first). The answer is ignored when core_steps.
  virtual bool wants_step(Tid tid, Addr pc, int sig, bool core_steps, CollectorHost& host) {
    (void)tid;
    (void)pc;
    (void)sig;
    (void)core_steps;
    (void)host;
    return false;
  }
  // tid (traced or not) stands at addr, on an int3 planted through host.plant(): it trapped
  // there (trapped), or is about to run from there. The core never runs a thread from one.
  virtual SiteVerdict at_site(Tid tid, Addr addr, bool trapped, CollectorHost& host) {
    (void)tid;
    (void)addr;
    (void)trapped;
    (void)host;
    return SiteVerdict::StepOver;
  }
  // tid stopped with SIGTRAP at pc after a step the collector asked for.
  virtual StepVerdict stepped(Tid tid, Addr pc, CollectorHost& host) {
    (void)tid;
    (void)pc;
    (void)host;
    return StepVerdict::NotMine;
  }
  // The instruction under one of the core's int3s ran by a single step of the core's own
  // (a step-over); tid is now at pc.
  virtual void stepped_over(Tid tid, Addr pc, CollectorHost& host) {
    (void)tid;
    (void)pc;
    (void)host;
  }
  // Traced tid is gone (it exited, or was killed, maybe with its whole process), before
  // thread_exited(): a collector whose thread recorded on its own since its last stop takes
  // what it wrote (the in-process recorder's ring, which outlives the process).
  virtual void thread_ended(Tid tid, CollectorHost& host) {
    (void)tid;
    (void)host;
  }
  // Traced tid stopped at a system call (the core catches them; entry: at the call's entry), a
  // stop GDB hears of when `caught`. False: the call is the collector's own (made by code of
  // its own running in the process): the core lets it go, unreported. A collector whose
  // threads run code of its own moves one back to the program's code here when caught.
  virtual bool syscall_stopped(Tid tid, bool entry, bool caught, CollectorHost& host) {
    (void)tid;
    (void)entry;
    (void)caught;
    (void)host;
    return true;
  }
  // The code of the process may have changed (memory writes, exec, library unload).
  virtual void code_changed() {}
  // Traced tid stopped (a signal, a ptrace event; not a syscall stop), before the core looks
  // at it: a collector whose threads run code of its own moves it back to the program's here,
  // and says whether the stop was its own.
  virtual StopMeaning thread_stopped(Tid tid, CollectorHost& host) {
    (void)tid;
    (void)host;
    return StopMeaning::Program;
  }

  // --- the process's life, for a collector with code of its own inside it -----------------------
  // tid may be running code of the collector's own (a cache): the core pauses such threads (their
  // stop brings them back to the program's code, thread_stopped) before it changes what they run
  // or lets the process go.
  virtual bool runs_own_code(Tid tid) const {
    (void)tid;
    return false;
  }
  // The core's int3s or the program's code changed while threads ran the collector's code, now
  // paused: its code made afresh.
  virtual void code_edited() {}
  // Why it cannot record the process of stopped tid now, after an exec (a 32-bit program,
  // seccomp's strict mode); nothing: it can.
  virtual std::optional<std::string> cannot_record(Tid tid) {
    (void)tid;
    return std::nullopt;
  }
  // A fork, vfork or clone event of `parent` (`child` stopped at birth): both back in the
  // program's code before anyone hears of them. Where parent stands now; nothing: it did not move.
  virtual std::optional<Addr> forked(Tid parent, Tid child) {
    (void)parent;
    (void)child;
    return std::nullopt;
  }
  // The collector a fork child with memory of its own starts with (`child`: its host): what this
  // one left in its copy of memory, not recording until the child's threads start; nullptr:
  // none.
  virtual std::unique_ptr<Collector> fork_heir(CollectorHost& child) {
    (void)child;
    return nullptr;
  }
  // The process exec'd: what the collector had in the old image went with it.
  virtual void exec_happened() {}
  // Recording ends, or the process is let go (its threads stopped): nothing of the collector's
  // stays in it.
  virtual void release() {}
  // The process is gone: nothing of it may be touched any more (its history stays).
  virtual void process_gone() {}
};

// What a backend's collector factory gets (collector_factories.hpp): the process's first thread
// to record, its ring size, --btrace-scope, and the process as the seam shows it.
// How a collector that records inside a process links to its recorder there, through the
// process's host (nullptr: no recorder here). Its collector owns the link.
using RecorderPortMaker = std::function<std::unique_ptr<RecorderPort>(CollectorHost&)>;

// What the collectors are set up with from outside the core (open_target.cpp), which hands it
// to each factory as it is.
struct CollectorSetup {
  RecorderPortMaker recorder_port;
};

struct CollectorRequest {
  Tid tid = 0;
  BtraceConfig config;
  BtraceScope scope;
  CollectorHost* host = nullptr;
  const CollectorSetup* setup = nullptr;
};

}  // namespace tracer
