// --btrace=dbt: the program runs under the dbt recorder (tracer/dbt, a Valgrind tool) with
// Valgrind's gdbserver on, and this Target drives it as GDB would, through vgdb (RspLink):
// registers, memory, breakpoints, threads, resuming and stops come from Valgrind; branch
// history comes from the recorder's rings (DbtTracer), libraries from the dynamic linker's list
// read through memory. One process, all-stop: no attach, fork following or non-stop.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "tracer/btrace/dbt_tracer.hpp"
#include "tracer/target.hpp"
#include "tracer/valgrind/rsp_link.hpp"

namespace tracer {

struct DbtOptions {
  std::string valgrind_lib;   // VALGRIND_LIB: Valgrind's files and the recorder
  std::uint64_t ring_bytes = 8u << 20;  // each thread's ring
};

class ValgrindTarget final : public Target {
 public:
  explicit ValgrindTarget(DbtOptions options);
  ~ValgrindTarget() override;

  // Valgrind's gdbserver catches syscalls; the recorder is the branch history. No non-stop,
  // fork or exec following, thread exit events or agent: a packet for them is refused.
  Capabilities capabilities() const override { return {.catch_syscalls = true, .branch_tracing = true}; }
  Result<Pid> launch(const LaunchSpec& spec) override;
  Result<void> attach(Pid pid) override;
  Result<void> detach() override;
  Result<void> kill() override;
  bool has_process() const override { return link_.has_value(); }
  Pid pid() const override { return pid_; }
  bool attached() const override { return false; }

  std::vector<ThreadInfo> threads() override;
  bool thread_alive(Tid tid) override;

  Result<void> resume(const ResumePlan& plan) override;
  int event_fd() const override { return link_ ? link_->fd() : -1; }
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

  // Valgrind's gdbserver catches syscalls itself (QCatchSyscalls passed on).
  // It finds thread-local storage too (qGetTLSAddr passed on).
  Result<Addr> tls_address(Tid tid, Addr offset, Addr link_map) override;
  Result<void> set_catch_syscalls(const SyscallCatch& what) override;

  Result<Bytes> auxv() override;
  Result<std::string> exec_file(Pid pid) override;
  Result<LibraryList> libraries() override;
  Result<Bytes> siginfo(Tid tid) override;
  Result<void> write_siginfo(Tid tid, const Bytes& data) override;
  // Valgrind keeps the program's sigactions to itself: the recorder writes them down.
  SignalAction signal_action(Tid tid, int sig) override;

  Result<void> enable_btrace(Tid tid, const BtraceConfig& config) override;
  Result<void> disable_btrace(Tid tid) override;
  BranchTracer* branch_tracer(Tid tid) override;
  void hand_over_history() override;
  void keep_ended_histories() override { keep_ended_histories_ = true; }
  std::vector<std::pair<Tid, BranchTracer*>> ended_histories(Pid pid) override;

  // When each thread the recorder saw began and ended (CLOCK_MONOTONIC ns; 0: not yet).
  struct ThreadLife {
    Tid tid = 0;
    std::uint64_t born_ns = 0;
    std::uint64_t exited_ns = 0;
  };
  std::vector<ThreadLife> thread_lives() const;

 private:
  Result<void> check_stopped() const;  // a process, and it is not running
  Result<std::string> ask(const std::string& packet);
  Result<std::string> read_xfer(const std::string& object, const std::string& annex);
  Result<void> select_thread(Tid tid);
  Result<void> set_breakpoint(bool insert, BreakpointType type, Addr addr, int len);  // Z or z
  // Byte offset and size of register regno in `g`, from the target description.
  Result<std::pair<std::size_t, std::size_t>> register_slot(int regno);
  // Every register of tid (`g`) and where regno starts in them.
  Result<std::pair<Bytes, std::size_t>> registers_around(Tid tid, int regno);
  StopEvent stop_from_reply(const std::string& reply);
  StopEvent ended_unannounced();  // the link closed with no stop reply
  // wait: reap the process now (it ended or was killed); else it runs on (detached) and is
  // reaped when this target goes, as gdbserver joins a detached child before it exits.
  void forget_process(bool wait = true);
  void remove_work_dir();
  std::string read_log() const;      // Valgrind's messages so far
  std::string valgrind_log() const;  // their last lines, for an error message
  void explain_sigill() const;       // an instruction Valgrind cannot translate: say so

  DbtOptions options_;
  std::optional<RspLink> link_;
  std::string dir_;  // the rings and vgdb's FIFOs; removed with the process
  Pid pid_ = 0;
  std::vector<Pid> detached_;  // run on after a detach; reaped at the end
  Tid selected_ = 0;
  bool running_ = false;
  bool stepping_ = false;
  std::set<Addr> breakpoints_;
  std::vector<std::size_t> register_sizes_;  // bytes per register in `g` order
  std::map<Tid, std::unique_ptr<DbtTracer>> tracers_;
  std::set<Tid> handed_over_;        // traced before GDB came: its enable keeps the history
  std::set<Tid> recording_threads_;  // the threads there when recording began
  std::string program_name_;         // a thread's name where Valgrind's shows
  bool keep_ended_histories_ = false;
  std::map<Pid, std::map<Tid, std::unique_ptr<DbtTracer>>> ended_;  // every ring of an ended process
};

}  // namespace tracer
