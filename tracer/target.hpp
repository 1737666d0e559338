// The inferior as the server sees it. LinuxTarget implements it with ptrace;
// test/support/fake_target.hpp implements it for handler tests. No Asio, no wire format here.
#pragma once

#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "arch/x86/register_roles.hpp"
#include "base/result.hpp"
#include "tracer/backend.hpp"
#include "tracer/btrace/branch_tracer.hpp"
#include "tracer/event_log.hpp"
#include "tracer/types.hpp"

namespace tracer {

template <class T>
using Result = base::Result<T>;

// What a target can do beyond what every target serves. The server announces and serves
// exactly these (server/features.cpp): a packet for something a target cannot do is refused
// as by a server without it, never accepted and ignored.
struct Capabilities {
  bool non_stop = false;             // set_non_stop(true): QNonStop, vStopped
  bool fork_events = false;          // set_report_forks: fork and vfork stops
  bool exec_events = false;          // set_report_exec
  bool thread_exit_events = false;   // set_report_thread_exits: QThreadEvents
  bool no_resumed = false;           // set_report_no_resumed
  bool thread_options = false;       // set_thread_options: QThreadOptions (clone and exit events)
  bool catch_syscalls = false;       // set_catch_syscalls: QCatchSyscalls
  bool breakpoint_commands = false;  // set_breakpoint_commands: Z0 ;cmds (an agent dprintf)
  bool branch_tracing = false;       // enable_btrace: Qbtrace, qXfer:btrace
  bool tracepoints = false;          // experiment(): QTDP, QTStart, QTFrame... (trace experiments)
  bool fast_tracepoints = false;     // fast_tracepoint_min_length(): jumps to an in-process agent
  // cs, ss, ds, es, fs, gs in read_registers are the thread's (the dbt recorder's simulated
  // CPU has none: it says 0 for each).
  bool segment_registers = false;

  // Every one of them (the Linux target; the fake's default).
  static constexpr Capabilities all() {
    return {.non_stop = true,
            .fork_events = true,
            .exec_events = true,
            .thread_exit_events = true,
            .no_resumed = true,
            .thread_options = true,
            .catch_syscalls = true,
            .breakpoint_commands = true,
            .branch_tracing = true,
            .tracepoints = true,
            .fast_tracepoints = true,
            .segment_registers = true};
  }
};

class Target;
namespace trace {
class Experiment;
}

// A descendant the target records by itself (the dbt recorder follows the whole tree) that a
// signal is about to kill: it waits there, linked to a Target of its own.
struct DyingDescendant {
  std::unique_ptr<Target> target;
  StopEvent stop;                    // the signal, and the thread it came to; Killed: it is
                                     // gone (SIGKILL), target has only its ended_histories
  std::vector<std::string> command;  // its program and arguments, as it was started
  std::string maps;                  // Killed: its /proc/PID/maps as its code last changed
};

class Target {
 public:
  virtual ~Target() = default;

  // What this target can do (the same for its whole life).
  virtual Capabilities capabilities() const { return {}; }

  // --- process life -----------------------------------------------------------------
  // Several processes may be debugged at once (fork children GDB keeps, extended-remote
  // run/attach). One of them is the current process: pid() names it, and memory,
  // breakpoints, auxv, libraries and detach() act on it. Hg and vCont select it.
  //
  // Starts the program stopped before its first instruction (after the shell's exec).
  virtual Result<Pid> launch(const LaunchSpec& spec) = 0;
  // Attaches to every thread of a running process and stops it.
  virtual Result<void> attach(Pid pid) = 0;
  // All-stop, right after attach(): a signal a thread of pid stopped with instead of our
  // SIGSTOP (one that was pending as we attached), taken from the thread so the attach's stop
  // reply reports it, as gdbserver does ("Program received signal SIGALRM"). GDB then passes
  // it or not when it resumes. nullopt: every thread stopped for the attach alone.
  virtual std::optional<StopEvent> take_attach_signal(Pid pid) {
    (void)pid;
    return std::nullopt;
  }
  // Removes every breakpoint and debug register from the current process, then lets every
  // thread of it run free.
  virtual Result<void> detach() = 0;
  // SIGKILL and reap every process.
  virtual Result<void> kill() = 0;
  virtual bool has_process() const = 0;
  virtual Pid pid() const = 0;
  // True when the current process was attached to rather than created (qAttached).
  virtual bool attached() const = 0;
  // Every process being debugged (current first is not promised).
  virtual std::vector<Pid> processes() {
    return has_process() ? std::vector<Pid>{pid()} : std::vector<Pid>{};
  }
  // Makes pid the current process.
  virtual Result<void> select_process(Pid pid) {
    if (has_process() && pid == this->pid()) {
      return base::success();
    }
    return base::make_error(base::Errc::no_process, "no such process");
  }
  // detach() / kill() of one process (D;PID, vKill;PID).
  virtual Result<void> detach_process(Pid pid) {
    auto ok = select_process(pid);
    return ok ? detach() : ok;
  }
  virtual Result<void> kill_process(Pid pid) {
    auto ok = select_process(pid);
    return ok ? kill() : ok;
  }
  // True when pid was attached to rather than created (qAttached:PID).
  virtual bool attached_process(Pid pid) { return pid == this->pid() && attached(); }

  // --- threads ----------------------------------------------------------------------
  // Every thread of every process (a fork child GDB has not been told of yet left out).
  virtual std::vector<ThreadInfo> threads() = 0;
  virtual bool thread_alive(Tid tid) = 0;
  // The process a thread belongs to (0: unknown thread).
  virtual Pid process_of(Tid tid) { return thread_alive(tid) ? pid() : 0; }

  // --- running and stopping ---------------------------------------------------------
  // Resumes according to plan; returns at once. The stop arrives through poll().
  virtual Result<void> resume(const ResumePlan& plan) = 0;
  // A file descriptor that becomes readable when child events may be waiting (signalfd);
  // the server watches it and calls poll(). -1 when there is nothing to watch.
  virtual int event_fd() const = 0;
  // Handles every waiting child event. Returns a stop to report: in all-stop once every
  // thread is stopped, in non-stop as soon as the thread stopped (call again for more).
  virtual std::optional<StopEvent> poll() = 0;
  // Asks the running program to stop (0x03, vCtrlC); the stop arrives through poll() with
  // SIGINT (in non-stop: one thread of the current process).
  virtual Result<void> interrupt() = 0;
  // All-stop: true between resume() and the StopEvent that ends it. Non-stop: some thread
  // GDB resumed is still running.
  virtual bool running() const = 0;
  // Linux signals to deliver straight to the program without reporting a stop
  // (QPassSignals). Default: none are passed, every signal is reported.
  virtual void set_pass_signals(const std::set<int>& linux_signals) { (void)linux_signals; }
  // QProgramSignals: the signals GDB lets the program have. A thread whose reported stop was
  // one of these gets it back when GDB detaches, as with gdbserver. Until GDB says (nullopt),
  // every signal but SIGTRAP and SIGINT, GDB's defaults.
  virtual void set_program_signals(const std::optional<std::set<int>>& linux_signals) { (void)linux_signals; }
  // Report an execve as a stop (GDB announced exec-events). Default: not reported.
  virtual void set_report_exec(bool on) { (void)on; }
  // Report fork / vfork (and vforkdone) as stops, the child kept stopped (GDB announced
  // fork-events / vfork-events). Default: children are let go at once.
  virtual void set_report_forks(bool fork, bool vfork) {
    (void)fork;
    (void)vfork;
  }
  // Report single threads exiting (QThreadEvents:1). Default: not reported.
  virtual void set_report_thread_exits(bool on) { (void)on; }
  // Per thread, what is reported besides (QThreadOptions): rules in order, a thread taking the
  // options of the last rule naming it; threads no rule names keep theirs. A new thread has
  // none.
  virtual Result<void> set_thread_options(const std::vector<ThreadOptionsRule>& rules) {
    (void)rules;
    return base::make_error(base::Errc::unsupported, "thread options are not supported");
  }
  // Report NoResumed when every thread GDB let run is gone (GDB announced no-resumed).
  virtual void set_report_no_resumed(bool on) { (void)on; }
  // Which syscalls of the current process stop it, at entry and at return (QCatchSyscalls).
  // Fork children inherit the setting; exec keeps it. Default: catching is not supported.
  virtual Result<void> set_catch_syscalls(const SyscallCatch& what) {
    (void)what;
    return base::make_error(base::Errc::unsupported, "catching syscalls is not supported");
  }
  // Non-stop mode (QNonStop:1): every thread stops and is reported on its own; resume() only
  // touches the threads it names, and ResumeKind::Stop stops a running thread (reported
  // with signal 0). Default: all-stop only.
  virtual Result<void> set_non_stop(bool on) {
    if (on) {
      return base::make_error(base::Errc::unsupported, "non-stop mode is not supported");
    }
    return base::success();
  }

  // Non-stop `?`: GDB is about to hear that `reported` is stopped. The other threads of its
  // process that GDB was never told of (an attach made before QNonStop:1, as with --attach)
  // run on, as gdbserver lets them: GDB sees them running and stops them with vCont;t if
  // it wants them stopped.
  virtual void run_unannounced(Tid reported) { (void)reported; }

  // --- registers, in the `g` packet layout of arch/x86 --------------------------------
  virtual Result<std::string> target_description(const std::string& annex) = 0;
  virtual Result<Bytes> read_registers(Tid tid) = 0;
  virtual Result<void> write_registers(Tid tid, const Bytes& regs) = 0;
  virtual Result<Bytes> read_register(Tid tid, int regno) = 0;
  virtual Result<void> write_register(Tid tid, int regno, const Bytes& value) = 0;
  // Where register regno is in tid's `g` block, and that block's size: for registers a trace
  // frame collected as a `g` block. Default: not known.
  struct RegisterPlace {
    std::size_t offset = 0;
    std::size_t size = 0;
    std::size_t block_size = 0;
  };
  virtual Result<RegisterPlace> register_place(Tid tid, int regno) {
    (void)tid, (void)regno;
    return base::make_error(base::Errc::unsupported, "register layout not known");
  }
  // The instruction set `tid` runs, which decides its register numbers. Default: amd64 (the
  // Valgrind target serves 64-bit programs only).
  virtual arch::x86::Isa isa(Tid tid) {
    (void)tid;
    return arch::x86::Isa::Amd64;
  }
  arch::x86::RegisterRoles register_roles(Tid tid) { return arch::x86::register_roles(isa(tid)); }
  // The thread's program counter, by its architecture's numbering.
  Result<Addr> read_pc(Tid tid) {
    const auto roles = register_roles(tid);
    auto bytes = read_register(tid, roles.pc);
    if (!bytes) {
      return bytes.error();
    }
    if (auto pc = arch::x86::address_value(roles, *bytes)) {
      return *pc;
    }
    return base::make_error(base::Errc::invalid, "the program counter has an unexpected size");
  }
  // Moves the thread's program counter (a legacy c ADDR / s ADDR).
  Result<void> write_pc(Tid tid, Addr pc) {
    const auto roles = register_roles(tid);
    return write_register(tid, roles.pc, arch::x86::address_bytes(roles, pc));
  }

  // --- memory: our own int3 bytes are hidden from reads and kept under writes ---------
  // Returns the readable prefix (possibly shorter than len); an error if nothing is readable.
  virtual Result<Bytes> read_memory(Addr addr, std::size_t len) = 0;
  virtual Result<void> write_memory(Addr addr, const Bytes& data) = 0;

  // --- breakpoints and watchpoints (Z/z) ----------------------------------------------
  virtual Result<void> insert_breakpoint(BreakpointType type, Addr addr, int len) = 0;
  virtual Result<void> remove_breakpoint(BreakpointType type, Addr addr, int len) = 0;
  // The conditions (agent expressions) of GDB's breakpoint at addr, inserted just before:
  // a hit is reported when any is true or cannot be evaluated, else the thread goes on as if
  // nothing happened. Empty: stop at every hit. Errc::malformed for bytecode that does not
  // check. Default: conditions are not evaluated here and every hit is reported, which is
  // still right, only slower: GDB evaluates each condition again at every stop.
  virtual Result<void> set_breakpoint_conditions(Addr addr, const std::vector<Bytes>& conditions) {
    (void)addr;
    (void)conditions;
    return base::success();
  }
  // Commands (agent expressions) of GDB's breakpoint at addr, inserted just before: run at
  // each hit whose conditions hold, in place of a stop GDB would hear of (an agent-style
  // dprintf: its printf prints on the server's standard output). Empty: none. Only a target
  // whose capabilities() say breakpoint_commands takes any.
  virtual Result<void> set_breakpoint_commands(Addr addr, const std::vector<Bytes>& commands) {
    (void)addr;
    if (commands.empty()) {
      return base::success();
    }
    return base::make_error(base::Errc::invalid, "breakpoint commands are not run by this target");
  }

  // --- tracepoints (capabilities().tracepoints) ----------------------------------------
  // The trace experiment: the server defines it and reads its frames; while it runs, a hit
  // of one of its tracepoints in the traced process collects into it and the thread goes on,
  // GDB not told. Null: this target does not trace.
  virtual trace::Experiment* experiment() { return nullptr; }
  // Makes the int3s of the experiment in its process what experiment()->sites() says: at
  // its start (the current process becomes the traced one), its stop, and when a tracepoint
  // is enabled, disabled or added during a run. An error: an int3 could not be placed (the
  // run must not start).
  virtual Result<void> place_tracepoints() {
    return base::make_error(base::Errc::unsupported, "tracepoints are not run by this target");
  }
  // Fast tracepoints (qTMinFTPILen): the shortest instruction a jump can replace in the
  // current process: 5 when the in-process agent is loaded there, 0 when it is not (yet);
  // nothing: this target has no fast tracepoints.
  virtual std::optional<std::uint32_t> fast_tracepoint_min_length() { return std::nullopt; }

  // --- what GDB asks about the process ------------------------------------------------
  virtual Result<Bytes> auxv() = 0;
  virtual Result<std::string> exec_file(Pid pid) = 0;  // pid 0: the current process
  virtual Result<LibraryList> libraries() = 0;
  virtual Result<Bytes> siginfo(Tid tid) = 0;
  virtual Result<void> write_siginfo(Tid tid, const Bytes& data) = 0;
  // Where thread tid's copy of a thread-local variable is: `offset` into the block of the
  // module whose link_map is at link_map (0: the program's own, for a static program).
  // Errc::unsupported: this target cannot tell (the reply is then empty, as from a server
  // that does not know qGetTLSAddr).
  virtual Result<Addr> tls_address(Tid tid, Addr offset, Addr link_map) {
    (void)tid, (void)offset, (void)link_map;
    return base::make_error(base::Errc::unsupported, "no thread-local storage lookup here");
  }
  // Where libthread_db is looked for (gdbserver's libthread-db-search-path; empty: the
  // default). Takes effect at the next lookup.
  virtual void set_thread_db_search_path(const std::string& path) { (void)path; }
  // What tid's process does with sig now (whether it would die of it, for triage).
  virtual SignalAction signal_action(Tid tid, int sig) {
    (void)tid;
    (void)sig;
    return SignalAction::Unknown;
  }

  // Where to write down threads born and exited, forks and execs as they happen (none: null).
  virtual void set_event_log(EventLog* log) { (void)log; }
  // Threads this target learned of only afterwards, when each began and ended (the dbt
  // recorder stamps them as they happen; the event log never saw them). Default: none.
  virtual std::vector<ThreadLife> thread_lives() const { return {}; }

  // --- branch tracing (optional capability) -------------------------------------------
  // Qbtrace:bts / Qbtrace:off for one thread. The error says which backend was tried and why
  // it is unavailable, in words a user can act on.
  virtual Result<void> enable_btrace(Tid tid, const BtraceConfig& config) {
    (void)tid;
    (void)config;
    return base::make_error(base::Errc::unsupported, "branch tracing is not available");
  }
  virtual Result<void> disable_btrace(Tid tid) {
    (void)tid;
    return base::make_error(base::Errc::unsupported, "branch tracing is not enabled");
  }
  // The history recorded so far goes to the next GDB (triage --serve): its Qbtrace:bts for a
  // thread traced already is accepted and keeps that thread's history.
  virtual void hand_over_history() {}
  // The thread's tracer while tracing is on, else nullptr.
  virtual BranchTracer* branch_tracer(Tid) { return nullptr; }
  // Triage: from now on, what a process recorded outlives it (killed from outside, nothing
  // else of it can be read any more): ended_histories() gives each of its threads' history.
  virtual void keep_ended_histories() {}
  virtual std::vector<std::pair<Tid, BranchTracer*>> ended_histories(Pid pid) {
    (void)pid;
    return {};
  }
  // --- a process tree recorded by the target itself (the dbt recorder) ------------------
  // Readable when a descendant may have begun to wait at a fatal signal (-1: none follows).
  virtual int descendants_fd() const { return -1; }
  // The next such descendant, stopped there; its target lets it die (resume with the signal).
  // One killed outright (SIGKILL) comes too, once reaped, with what it recorded.
  // Orphans among them (their parent died) come to the caller when it is their reaper
  // (PR_SET_CHILD_SUBREAPER): the target reaps each there, and one killed outright comes here.
  virtual std::optional<DyingDescendant> take_dying_descendant() { return std::nullopt; }
  // Whether a process of that tree, the started program aside, still lives (its end, or its
  // death, still to come through take_dying_descendant). Default: none follows.
  virtual bool descendants_alive() { return false; }

  // Why the last enable could not use Intel BTS (the kernel's answer and what to do), empty
  // when it could or did not try: with --btrace=auto, why it recorded in software instead.
  virtual std::string bts_problem() const { return {}; }
  // With --btrace=auto: the backends ahead of the one it records with that it passed over, in its
  // order, each with why (BTS absent, the in-process recorder unable to come in).
  virtual std::vector<std::pair<Backend, std::string>> auto_passed_over() const {
    if (std::string problem = bts_problem(); !problem.empty()) {
      return {{Backend::Bts, problem}};
    }
    return {};
  }
};

}  // namespace tracer
