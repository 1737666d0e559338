// The Linux inferior: one process traced with ptrace, all-stop. Every ptrace call is made
// by the thread that owns this object; child events arrive through a SIGCHLD signalfd.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "tracer/linux/memory.hpp"
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
  std::optional<StopEvent> exit_event_;
  std::uint64_t event_seq_ = 0;
  ProcessMemory memory_;
  SoftwareBreakpoints breakpoints_;
};

}  // namespace tracer
