// The inferior as the server sees it. LinuxTarget implements it with ptrace;
// test/fake_target.hpp implements it for handler tests. No Asio, no wire format here.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "base/result.hpp"
#include "tracer/btrace/branch_tracer.hpp"
#include "tracer/types.hpp"

namespace tracer {

template <class T>
using Result = base::Result<T>;

class Target {
 public:
  virtual ~Target() = default;

  // --- process life -----------------------------------------------------------------
  // Starts the program stopped before its first instruction (after the shell's exec).
  virtual Result<Pid> launch(const LaunchSpec& spec) = 0;
  // Attaches to every thread of a running process and stops it.
  virtual Result<void> attach(Pid pid) = 0;
  // Removes every breakpoint and debug register, then lets every thread run free.
  virtual Result<void> detach() = 0;
  // SIGKILL and reap.
  virtual Result<void> kill() = 0;
  virtual bool has_process() const = 0;
  virtual Pid pid() const = 0;
  // True when the process was attached to rather than created (qAttached).
  virtual bool attached() const = 0;

  // --- threads ----------------------------------------------------------------------
  virtual std::vector<ThreadInfo> threads() = 0;
  virtual bool thread_alive(Tid tid) = 0;

  // --- running and stopping ---------------------------------------------------------
  // Resumes according to plan; returns at once. The stop arrives through poll().
  virtual Result<void> resume(const ResumePlan& plan) = 0;
  // A file descriptor that becomes readable when child events may be waiting (signalfd);
  // the server watches it and calls poll(). -1 when there is nothing to watch.
  virtual int event_fd() const = 0;
  // Handles every waiting child event. Returns a stop to report once the process is
  // fully stopped (all-stop), nothing while it still runs.
  virtual std::optional<StopEvent> poll() = 0;
  // Asks a running process to stop (0x03); the stop arrives through poll() with SIGINT.
  virtual Result<void> interrupt() = 0;
  // True between resume() and the StopEvent that ends it.
  virtual bool running() const = 0;
  // Linux signals to deliver straight to the program without reporting a stop
  // (QPassSignals). Default: none are passed, every signal is reported.
  virtual void set_pass_signals(const std::set<int>& linux_signals) { (void)linux_signals; }
  // Report an execve as a stop (GDB announced exec-events). Default: not reported.
  virtual void set_report_exec(bool on) { (void)on; }

  // --- registers, in the `g` packet layout of arch/x86 --------------------------------
  virtual Result<std::string> target_description(const std::string& annex) = 0;
  virtual Result<Bytes> read_registers(Tid tid) = 0;
  virtual Result<void> write_registers(Tid tid, const Bytes& regs) = 0;
  virtual Result<Bytes> read_register(Tid tid, int regno) = 0;
  virtual Result<void> write_register(Tid tid, int regno, const Bytes& value) = 0;

  // --- memory: our own int3 bytes are hidden from reads and kept under writes ---------
  // Returns the readable prefix (possibly shorter than len); an error if nothing is readable.
  virtual Result<Bytes> read_memory(Addr addr, std::size_t len) = 0;
  virtual Result<void> write_memory(Addr addr, const Bytes& data) = 0;

  // --- breakpoints and watchpoints (Z/z) ----------------------------------------------
  virtual Result<void> insert_breakpoint(BreakpointType type, Addr addr, int len) = 0;
  virtual Result<void> remove_breakpoint(BreakpointType type, Addr addr, int len) = 0;

  // --- what GDB asks about the process ------------------------------------------------
  virtual Result<Bytes> auxv() = 0;
  virtual Result<std::string> exec_file(Pid pid) = 0;  // pid 0: the current process
  virtual Result<LibraryList> libraries() = 0;
  virtual Result<Bytes> siginfo(Tid tid) = 0;
  virtual Result<void> write_siginfo(Tid tid, const Bytes& data) = 0;

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
  // The thread's tracer while tracing is on, else nullptr.
  virtual BranchTracer* branch_tracer(Tid) { return nullptr; }
};

}  // namespace tracer
