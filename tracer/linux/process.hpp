// One traced process: its address space (memory with our int3s and slots, the debug-register slots
// every thread shares), its threads, its history collector, and how it came to be ours.
// Plain data with a few lookups; the core (LinuxTarget) drives it.
#pragma once

#include <array>
#include <map>
#include <memory>
#include <optional>
#include <set>

#include "arch/x86/debug_registers.hpp"
#include "tracer/btrace/collector.hpp"
#include "tracer/linux/code_memory.hpp"
#include "tracer/linux/kernel.hpp"
#include "tracer/linux/step_over.hpp"
#include "tracer/linux/thread_db_host.hpp"
#include "tracer/linux/thread.hpp"

namespace tracer {

enum class ProcessOrigin {
  Launched,  // we started it: killed when we go
  Attached,  // it was running: detached when we go
  Forked,    // a traced process forked it: as its parent
};

struct Process {
  explicit Process(Kernel& k) : kernel(k) {}
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;

  Kernel& kernel;  // what its threads are asked through (kernel.hpp)
  Pid pid = 0;
  ProcessOrigin origin = ProcessOrigin::Launched;
  // What its program runs (decides register numbers and how code decodes); set when it
  // becomes ours and at each exec.
  arch::x86::Isa isa = arch::x86::Isa::Amd64;
  bool attached = false;        // qAttached: we did not create it (inherited by fork children)
  bool known_to_gdb = true;     // false for a fork child until its fork event is reported
  bool unannounced = false;     // attached in all-stop; GDB was told of none of its stops yet
  Pid vfork_parent = 0;         // a vfork child sharing its parent's memory until it execs/exits
  Pid memory_of = 0;            // the parent whose memory it shares (vfork, clone(CLONE_VM)) until it execs

  int range_stops = 0;          // threads running to an int3 of range_run.cpp (most often 0)
  Pid forked_by = 0;            // ProcessOrigin::Forked: the process whose fork made it
  bool release_when_started = false;  // a fork child nobody debugs: let go at its first stop
  CodeMemory code;              // its memory, and our int3s and slots in it
  arch::x86::DebugSlots dr_slots;
  std::array<std::uint64_t, arch::x86::kDebugSlots> read_watch_values{};
  std::map<Tid, LinuxThread> threads;
  StepOver step_over;  // at most one per address space at a time (step_over.hpp)
  SyscallCatch catch_syscalls;        // QCatchSyscalls: its threads run with PTRACE_SYSCALL
  std::map<Addr, std::vector<Bytes>> conditions;  // GDB's breakpoint conditions (breakpoint_agent.cpp)
  std::map<Addr, std::vector<Bytes>> commands;    // and commands (agent-style dprintf)
  // Set while branch tracing is on; a fork child's may be there before it records (what its
  // parent's collector left in its memory: Collector::fork_heir).
  std::unique_ptr<Collector> collector;
  // Threads stopped by their collector's own request for code_edited (StopMeaning::OwnEdit):
  // they stay stopped, whatever resumes the others, until it is done (collector_edits_due).
  std::set<Tid> collector_edit_waiters;
  // A vfork child asked to record (enable_btrace) while it runs in its parent's memory: a
  // collector's int3s there would be its parent's. It starts recording at its exec.
  std::optional<BtraceConfig> record_at_exec;
  // libthread_db for thread-local storage, loaded at the first qGetTLSAddr (dropped at exec).
  std::unique_ptr<ProcessThreadDbHost> thread_db_host;
  std::unique_ptr<ThreadDb> thread_db;
  bool frozen = false;  // being detached or killed: nothing of it runs again
  // Running threads of it are being stopped for a moment, unreported (non-stop,
  // LinuxTarget::with_threads_paused): none runs again until that is done.
  bool paused = false;
  // It died. Kept, with the registers read at its last stop, until GDB hears how it ended
  // (its end waits in PendingEvents: for the next resume if GDB had it stopped).
  bool ended = false;

  bool any_resumed() const {
    for (const auto& [tid, t] : threads) {
      if (t.gdb.resumed()) {
        return true;
      }
    }
    return false;
  }
  LinuxThread* find(Tid tid) {
    auto it = threads.find(tid);
    return it == threads.end() ? nullptr : &it->second;
  }
  LinuxThread& add_thread(Tid tid) {
    LinuxThread& t = threads.try_emplace(tid, kernel).first->second;
    t.tid = tid;
    t.pid = pid;
    return t;
  }
  // A stopped thread to read process-wide things through (the leader first), or nullptr.
  LinuxThread* any_stopped() {
    if (auto* t = find(pid); t != nullptr && t->stopped()) {
      return t;
    }
    for (auto& [tid, t] : threads) {
      if (t.stopped()) {
        return &t;
      }
    }
    return nullptr;
  }
  bool all_settled() const {
    for (const auto& [tid, t] : threads) {
      if (!t.settled(step_over)) {
        return false;
      }
    }
    return true;
  }
};

}  // namespace tracer
