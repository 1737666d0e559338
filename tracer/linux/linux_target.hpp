// The Linux inferior: one process traced with ptrace, all-stop. Every ptrace call is made
// by the thread that owns this object; child events arrive through a SIGCHLD signalfd.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <vector>

#include "tracer/linux/debug_registers.hpp"
#include "tracer/linux/instruction_cache.hpp"
#include "tracer/linux/memory.hpp"
#include "tracer/linux/soft_step.hpp"
#include "tracer/linux/software_breakpoints.hpp"
#include "tracer/target.hpp"

namespace tracer {

class LinuxTarget final : public Target {
 public:
  // Blocks SIGCHLD and opens the signalfd that event_fd() returns.
  LinuxTarget();
  // Kills a launched process, detaches from an attached one.
  ~LinuxTarget() override;
  LinuxTarget(const LinuxTarget&) = delete;
  LinuxTarget& operator=(const LinuxTarget&) = delete;

  Result<Pid> launch(const LaunchSpec& spec) override;
  Result<void> attach(Pid pid) override;
  Result<void> detach() override;
  Result<void> kill() override;
  bool has_process() const override { return pid_ != 0; }
  Pid pid() const override { return pid_; }
  bool attached() const override { return attached_; }

  std::vector<ThreadInfo> threads() override;
  bool thread_alive(Tid tid) override;

  Result<void> resume(const ResumePlan& plan) override;
  int event_fd() const override { return sfd_; }
  std::optional<StopEvent> poll() override;
  Result<void> interrupt() override;
  bool running() const override { return running_; }
  void set_pass_signals(const std::set<int>& linux_signals) override { pass_signals_ = linux_signals; }

  Result<std::string> target_description(const std::string& annex) override;
  Result<Bytes> read_registers(Tid tid) override;
  Result<void> write_registers(Tid tid, const Bytes& regs) override;
  Result<Bytes> read_register(Tid tid, int regno) override;
  Result<void> write_register(Tid tid, int regno, const Bytes& value) override;

  Result<Bytes> read_memory(Addr addr, std::size_t len) override;
  Result<void> write_memory(Addr addr, const Bytes& data) override;

  Result<void> insert_breakpoint(BreakpointType type, Addr addr, int len) override;
  Result<void> remove_breakpoint(BreakpointType type, Addr addr, int len) override;

  Result<Bytes> auxv() override;
  Result<std::string> exec_file(Pid pid) override;
  Result<LibraryList> libraries() override;
  Result<Bytes> siginfo(Tid tid) override;
  Result<void> write_siginfo(Tid tid, const Bytes& data) override;

  // Qbtrace:bts / Qbtrace:off with the backend set_btrace_backend() chose (btrace.cpp).
  Result<void> enable_btrace(Tid tid, const BtraceConfig& config) override;
  Result<void> disable_btrace(Tid tid) override;
  BranchTracer* branch_tracer(Tid tid) override;
  // --btrace=auto|bts|soft|step; applies to later enables.
  void set_btrace_backend(BtraceBackend backend) { btrace_backend_ = backend; }
  void set_report_exec(bool on) override { report_exec_ = on; }

 private:
  struct Thread {
    Tid tid = 0;
    bool stopped = true;             // in a ptrace-stop we have seen
    bool seen_initial_stop = true;   // false for a clone child until its first SIGSTOP
    bool sigstop_expected = false;   // we sent a SIGSTOP that has not arrived yet
    bool stepping = false;           // last resumed with PTRACE_SINGLESTEP
    bool resumed = false;            // part of the current resume (all-stop round)
    ThreadAction action;             // what the current resume asked of it
    std::optional<StopEvent> pending;  // reportable, not reported yet
    std::uint64_t pending_seq = 0;     // order the pending events happened in
    DrValues dr;                       // debug registers as last written to it
  };

  // --- threads and process state (linux_target.cpp) ---
  Thread* find(Tid tid);
  Thread& add_thread(Tid tid);
  void forget_process();
  Result<Tid> any_stopped_tid() const;
  Result<Thread*> stopped_thread(Tid tid);

  // --- process life (launch.cpp, attach.cpp) ---
  void adopt(Pid pid, bool attached);
  Result<void> attach_thread(Tid tid);
  void flush_sigstop(Thread& t, int& deliver);

  // --- the wait loop (wait_loop.cpp) ---
  void drain_signalfd();
  void handle_status(Tid tid, int status);
  void handle_exit(Tid tid, int status);
  void handle_event(Thread& t, int event);
  void handle_signal_stop(Thread& t, int sig);
  std::optional<StopEvent> classify_trap(Thread& t);
  void make_pending(Thread& t, StopEvent ev);
  void continue_internally(Thread& t);
  void stop_all();
  std::optional<StopEvent> take_report();

  // --- hardware breakpoints and watchpoints (debug_registers.cpp) ---
  struct DebugTrap {
    enum class Kind { None, Report, Ignored } kind = Kind::None;  // Ignored: a write under rwatch
    StopEvent event;
  };
  Result<void> insert_debug_point(BreakpointType type, Addr addr, int len);
  Result<void> remove_debug_point(BreakpointType type, Addr addr, int len);
  void sync_debug_registers(Thread& t);
  void clear_debug_registers();
  void refresh_read_watches();
  DebugTrap debug_trap(Thread& t);

  // --- signals GDB wants delivered without a stop (signals.cpp) ---
  bool pass_signal(Thread& t, int sig);

  // --- branch tracing by single-stepping (btrace.cpp, soft_step_target.cpp) ---
  struct TracedThread {
    std::unique_ptr<BranchTracer> tracer;
    SoftStepTracer* step = nullptr;  // the same object when the backend is SoftStep
  };
  struct StepOutcome {
    enum class Kind { NotTraced, Report, Continue, Classify } kind = Kind::NotTraced;
    StopEvent event;  // Report
  };
  SoftStepTracer* soft_stepper(Tid tid);
  bool soft_step_begin(Thread& t, int sig);
  bool soft_step_record(Thread& t, SoftStepTracer& s, Addr to);
  StepOutcome soft_step_trap(Thread& t);
  void soft_step_after_step_over(Thread& t);
  bool soft_step_wait(std::uint64_t& deadline_ns);
  const arch::x86::InstructionInfo* decode_at(Addr pc);
  void forget_btrace(Tid tid);

  // --- fork children (fork.cpp): GDB follows the parent, the child runs free ---
  void release_fork_child(Pid child, bool shares_memory);

  // --- resuming (resume.cpp) ---
  Result<void> run_thread(Thread& t, bool step, int sig);
  Result<bool> step_over_breakpoint(Thread& t, int sig);
  bool finish_step_over(Thread& t, int status);
  void kick_event_fd();

  int sfd_ = -1;
  Pid pid_ = 0;
  bool attached_ = false;
  bool running_ = false;
  bool stopping_ = false;
  bool interrupt_requested_ = false;
  std::map<Tid, Thread> threads_;
  std::set<Pid> stopped_fork_children_;
  bool report_exec_ = false;  // fork children seen stopped before their fork event
  std::optional<StopEvent> exit_event_;
  std::uint64_t event_seq_ = 0;
  ProcessMemory memory_;
  SoftwareBreakpoints breakpoints_;
  arch::x86::DebugSlots dr_slots_;
  std::array<std::uint64_t, arch::x86::kDebugSlots> read_watch_values_{};
  std::set<int> pass_signals_;
  BtraceBackend btrace_backend_ = BtraceBackend::Auto;
  std::map<Tid, TracedThread> btrace_;
  InstructionCache insn_cache_;
};

}  // namespace tracer
