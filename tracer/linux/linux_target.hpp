// The Linux inferior: every process we debug, traced with ptrace. The core is non-stop:
// each thread is a small state machine (thread.hpp) fed by one event source (one
// non-blocking waitpid drain); all-stop is a policy on top (stop the others, report one
// event, keep the rest pending). Nothing in it waits for a single thread: stepping over a
// breakpoint is a state of that thread. Every ptrace call is made by the thread that owns
// this object.
//
// Files: linux_target.cpp (lookups, registers, memory, breakpoints), events.cpp (one wait
// status into its thread), forks.cpp (clone, fork, vfork, exec), policy.cpp (what to report
// and when), resume.cpp (resuming and step-overs), attach.cpp (attach, detach, kill),
// launch.cpp, debug_registers.cpp, signals.cpp (QPassSignals), syscalls.cpp (catch syscall),
// thread_options.cpp (QThreadOptions), btrace.cpp and collector_sites.cpp (the collector
// seam), breakpoint_agent.cpp and out_of_line.cpp (conditions and commands GDB never hears
// of), range_run.cpp (range steps), tracepoints.cpp and fast_tracepoints.cpp, thread_db.cpp.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <vector>

#include "tracer/backend.hpp"
#include "tracer/btrace/scope.hpp"
#include "tracer/linux/all_stop.hpp"
#include "tracer/linux/code_view.hpp"
#include "tracer/linux/event_source.hpp"
#include "tracer/linux/kernel.hpp"
#include "tracer/linux/pending_events.hpp"
#include "tracer/linux/process.hpp"
#include "tracer/linux/procfs.hpp"
#include "tracer/target.hpp"
#include "tracer/trace/agent_wire.hpp"
#include "tracer/trace/experiment.hpp"

namespace tracer {

class LinuxTarget final : public Target {
 public:
  LinuxTarget() : LinuxTarget(linux_kernel()) {}
  // Asking kernel (tests: a scripted one) in place of the real one.
  explicit LinuxTarget(Kernel& kernel) : kernel_(kernel), events_(kernel) {}
  // Kills launched processes, detaches from attached ones.
  ~LinuxTarget() override;
  LinuxTarget(const LinuxTarget&) = delete;
  LinuxTarget& operator=(const LinuxTarget&) = delete;

  Capabilities capabilities() const override { return Capabilities::all(); }
  Result<Pid> launch(const LaunchSpec& spec) override;
  Result<void> attach(Pid pid) override;
  Result<void> detach() override;
  Result<void> kill() override;
  // A process that died while stopped (SIGKILL from outside) is still there for GDB until its
  // end is reported, at the next resume.
  bool has_process() const override { return !processes_.empty() || pending_.has_exits(); }
  Pid pid() const override { return current_; }
  bool attached() const override;
  std::vector<Pid> processes() override;
  Result<void> select_process(Pid pid) override;
  Result<void> detach_process(Pid pid) override;
  Result<void> kill_process(Pid pid) override;
  bool attached_process(Pid pid) override;

  std::vector<ThreadInfo> threads() override;
  bool thread_alive(Tid tid) override;
  Pid process_of(Tid tid) override {
    Located at = locate(tid);
    return at.process != nullptr ? at.process->pid : 0;
  }

  Result<void> resume(const ResumePlan& plan) override;
  int event_fd() const override { return events_.fd(); }
  std::optional<StopEvent> poll() override;
  Result<void> interrupt() override;
  bool running() const override;
  void set_pass_signals(const std::set<int>& linux_signals) override { pass_signals_ = linux_signals; }
  void set_program_signals(const std::optional<std::set<int>>& linux_signals) override {
    program_signals_ = linux_signals;
  }
  void set_report_exec(bool on) override { report_exec_ = on; }
  void set_report_forks(bool fork, bool vfork) override {
    report_fork_ = fork;
    report_vfork_ = vfork;
  }
  void set_report_thread_exits(bool on) override { report_thread_exits_ = on; }
  void set_report_no_resumed(bool on) override { report_no_resumed_ = on; }
  Result<void> set_thread_options(const std::vector<ThreadOptionsRule>& rules) override;
  Result<void> set_catch_syscalls(const SyscallCatch& what) override;
  void set_event_log(EventLog* log) override { event_log_ = log; }
  void keep_ended_histories() override { keep_ended_histories_ = true; }
  std::vector<std::pair<Tid, BranchTracer*>> ended_histories(Pid pid) override;
  Result<void> set_non_stop(bool on) override;
  void run_unannounced(Tid reported) override;
  std::optional<StopEvent> take_attach_signal(Pid pid) override;

  Result<std::string> target_description(const std::string& annex) override;
  Result<Bytes> read_registers(Tid tid) override;
  Result<void> write_registers(Tid tid, const Bytes& regs) override;
  Result<Bytes> read_register(Tid tid, int regno) override;
  Result<void> write_register(Tid tid, int regno, const Bytes& value) override;
  arch::x86::Isa isa(Tid tid) override;
  Result<RegisterPlace> register_place(Tid tid, int regno) override;

  Result<Bytes> read_memory(Addr addr, std::size_t len) override;
  Result<void> write_memory(Addr addr, const Bytes& data) override;

  Result<void> insert_breakpoint(BreakpointType type, Addr addr, int len) override;
  Result<void> remove_breakpoint(BreakpointType type, Addr addr, int len) override;
  Result<void> set_breakpoint_conditions(Addr addr, const std::vector<Bytes>& conditions) override;
  Result<void> set_breakpoint_commands(Addr addr, const std::vector<Bytes>& commands) override;
  // (Frames the in-process agent collected come in first: every reader sees them.)
  trace::Experiment* experiment() override {
    take_agent_frames();
    return &experiment_;
  }
  Result<void> place_tracepoints() override;
  std::optional<std::uint32_t> fast_tracepoint_min_length() override;

  Result<Bytes> auxv() override;
  Result<std::string> exec_file(Pid pid) override;
  Result<LibraryList> libraries() override;
  Result<Bytes> siginfo(Tid tid) override;
  Result<void> write_siginfo(Tid tid, const Bytes& data) override;
  SignalAction signal_action(Tid tid, int sig) override { return procfs::signal_action(tid, sig); }
  // Through glibc's libthread_db (thread_db.cpp), loaded per process at the first question.
  Result<Addr> tls_address(Tid tid, Addr offset, Addr link_map) override;
  void set_thread_db_search_path(const std::string& path) override;

  // Qbtrace:bts / Qbtrace:off with the backend set_btrace_backend() chose (btrace.cpp).
  Result<void> enable_btrace(Tid tid, const BtraceConfig& config) override;
  Result<void> disable_btrace(Tid tid) override;
  BranchTracer* branch_tracer(Tid tid) override;
  void hand_over_history() override;
  // --btrace=auto|bts|soft|step; applies to later enables.
  void set_btrace_backend(Backend backend) { btrace_backend_ = backend; }
  std::string bts_problem() const override {
    auto it = collector_problems_.find(Backend::Bts);
    return it == collector_problems_.end() ? std::string() : it->second;
  }
  std::vector<std::pair<Backend, std::string>> auto_passed_over() const override {
    std::vector<std::pair<Backend, std::string>> out;
    for (const Backend backend : kAutoInSession) {
      if (auto it = collector_problems_.find(backend); it != collector_problems_.end()) {
        out.emplace_back(backend, it->second);
      }
    }
    return out;
  }
  // --btrace-scope: which objects SoftEmulate records (auto then prefers it to BTS).
  void set_btrace_scope(BtraceScope scope) { btrace_scope_ = std::move(scope); }
  // What the collectors are set up with (handed to each factory as it is).
  void set_collector_setup(CollectorSetup setup) { collector_setup_ = std::move(setup); }

 private:
  struct Located {
    Process* process = nullptr;
    LinuxThread* thread = nullptr;
  };

  // launch's work (launch.cpp): the program started, stopped at its first instruction.
  Result<Pid> start_stopped(const LaunchSpec& spec);

  // --- lookups (linux_target.cpp) ---
  Process* process(Pid pid);
  Process* current();
  Located locate(Tid tid);
  Result<Located> stopped_thread(Tid tid);
  Process& add_process(Pid pid, ProcessOrigin origin);
  void open_memory(Process& p);  // its memory, at its start and after an exec
  bool gone(Pid pid, Tid tid);   // a zombie (or dead), by /proc
  void forget_process(Pid pid);
  bool all_stop() const { return !non_stop_; }

  // --- one wait status (events.cpp) ---
  void handle_batch(const std::vector<WaitStatus>& batch);
  void handle_status(Tid tid, int status);
  void handle_exit(Process& p, Tid tid, int status);
  void handle_signal(Process& p, LinuxThread& t, int sig);
  void step_over_stopped(Process& p, LinuxThread& t, int sig, int event);
  std::optional<StopEvent> classify_trap(Process& p, LinuxThread& t);
  bool step_on_past_syscall_exit(LinuxThread& t);
  bool delivered_before(LinuxThread& t, const siginfo_t& si);
  // --- breakpoint conditions and commands (breakpoint_agent.cpp): a hit that is to be reported ---
  bool condition_holds(Process& p, LinuxThread& t, Addr addr);
  // Runs the commands of GDB's breakpoint at addr; false if it has none (the hit is GDB's).
  bool ran_commands(Process& p, LinuxThread& t, Addr addr);
  // --- tracepoints (tracepoints.cpp) ---
  // t stopped on the int3 at addr, one of the experiment's: its tracepoints there collect.
  void collect_at_tracepoint(Process& p, LinuxThread& t, Addr addr);
  // t, resumed where it stopped on a tracepoint's int3 alone (it collected there), steps over
  // it without collecting again: true if that step-over is under way in place (else t runs
  // on, from an out-of-line copy if it had to move).
  bool resumed_on_tracepoint(Process& p, LinuxThread& t, int sig);
  // --- fast tracepoints (fast_tracepoints.cpp) ---
  // The in-process agent's control block in p (looked for once per process); 0: none.
  Addr find_agent(Process& p);
  // At a run's start, with every thread of p stopped: a jump to a pad for each tracepoint the
  // agent can collect; the others stay int3s.
  void place_fast_tracepoints(Process& p);
  // During a run: the jumps that gave way are forgotten, and those whose tracepoint was
  // disabled, or that another enabled tracepoint now shares, come out (every thread of p
  // stopped): a trap collects there instead.
  void retire_jumps(Process& p);
  // The run ended: the agent stops collecting, and the jumps come out once every thread of
  // p is stopped (a thread may be running through a pad).
  void remove_fast_tracepoints(Process& p);
  // The agent's frames into the experiment; a run the agent ended (pass count, an error), or
  // a full buffer, ends here.
  void take_agent_frames();
  // A single step of t's while-stepping ended at pc: its frame is collected; the last step
  // (or a run that ended) ends the while-stepping.
  void while_step_ended(Process& p, LinuxThread& t, Addr pc);
  // --- out-of-line step-overs (out_of_line.cpp) ---
  // Points t, stopped on the int3 at addr, at a copy of the instruction there; false if it
  // must be stepped over in place.
  bool step_over_out_of_line(Process& p, LinuxThread& t, Addr addr);
  // A thread stopped inside a slot shows the original's pc (at each stop).
  void leave_out_of_line(Process& p, LinuxThread& t);
  // One shown at a breakpoint whose copy it had yet to run goes back to the slot (at resume).
  void reenter_out_of_line(Process& p, LinuxThread& t);
  // --- catch syscall (syscalls.cpp) ---
  void syscall_stopped(Process& p, LinuxThread& t);
  bool runs_to_syscall(Process& p, LinuxThread& t, bool step, bool collector_step);
  std::optional<StopEvent> end_of_step(Process& p, LinuxThread& t, Addr pc);
  void make_pending(LinuxThread& t, StopEvent ev);
  // Lets a thread go on after a stop that is not reported, if GDB wants it running.
  void keep_going(Process& p, LinuxThread& t);

  // --- clone, fork, vfork, exec (forks.cpp) ---
  void handle_ptrace_event(Process& p, LinuxThread& t, int event);
  void thread_started(Process& p, LinuxThread& t);
  // GDB hears of t's exit: thread events are on (QThreadEvents), or t's options ask it.
  bool reports_exit_of(const LinuxThread& t) const;
  void tell_thread_exit(Process& p, Tid tid, int status, bool resumed);
  void leader_became_zombie(Process& p, LinuxThread& leader);
  void on_clone(Process& p, LinuxThread& t, Tid child);
  void on_fork(Process& p, LinuxThread& t, Pid child, bool vfork);
  // A vfork child stops sharing its parent's memory (exit, exec): GDB's int3s it planted there
  // become the parent's.
  void hand_back_vfork_memory(Process& child);
  void on_exec(Process& p, LinuxThread& t);
  void release_fork_child(Process& child);

  // --- what to report, and stopping threads (policy.cpp) ---
  std::optional<StopEvent> next_report();
  bool any_resumed() const;
  std::optional<StopEvent> all_stop_report();
  std::optional<StopEvent> non_stop_report();
  void request_stop(LinuxThread& t);
  bool settle();
  PendingEvents::Next all_stop_next();  // the event all-stop reports next
  void release_held_exits(const ResumePlan& plan);
  std::vector<Pid> unreported_fork_children(Pid pid) const;
  // A running leader that called pthread_exit (or exited) before its threads is a zombie: it
  // leaves the thread list, as in gdbserver. Asked of /proc when GDB asks for threads.
  void notice_zombie_leader(Process& p);
  // Stops every thread of p (or of every process when p is null) before returning, for
  // detach, kill and the server going away. Events of other threads are kept pending.
  void stop_now(Process* p);
  StopEvent reported(StopEvent ev);

  // --- resuming (resume.cpp) ---
  void proceed(Process& p);
  Result<void> run_thread(Process& p, LinuxThread& t, int sig);
  void start_step_over(Process& p, LinuxThread& t, Addr addr, int sig);
  void try_begin_step_over(Process& p);
  void end_step_over(Process& p);
  bool collector_stepping() const;

  // --- a collector's int3s (collector_sites.cpp) ---
  enum class SitePass {
    NotOnSite,  // the thread is not on one: run it
    Performed,  // the instruction there was performed: look again where the thread is now
    Held,       // do not run it: its step ended there, or a step-over of it began
  };
  bool collector_site(const Process& p, Addr addr) const;
  SitePass pass_collector_site(Process& p, LinuxThread& t, int& sig);
  void trapped_on_collector_site(Process& p, LinuxThread& t, Addr addr);
  // Takes owner's claims off every site of p, restoring the bytes nobody else wants in memory.

  // --- range steps run at full speed to a temporary int3 (range_run.cpp) ---
  // Plants the int3 at the end of the straight-line code ahead of t in its range and returns
  // true (then t is to be continued, not stepped); false: step it.
  bool run_to_range_stop(Process& p, LinuxThread& t, int sig);
  void drop_range_stop(Process& p, LinuxThread& t);
  void drop_stale_range_stops(Process& p);
  bool range_site(const Process& p, const LinuxThread& t, Addr addr) const;
  std::optional<StopEvent> trapped_on_range_site(Process& p, LinuxThread& t, Addr addr);
  std::optional<Addr> perform_range_branch(Process& p, LinuxThread& t, Addr addr);

  // --- attach, detach, kill (attach.cpp) ---
  Result<void> attach_thread(Process& p, Tid tid);
  void flush_sigstop(LinuxThread& t, int& deliver);
  bool program_gets(int sig) const;  // QProgramSignals (GDB's default until it says)
  Result<void> detach_one(Process& p);
  void kill_all(bool spare_attached);

  // --- hardware breakpoints and watchpoints (debug_registers.cpp) ---
  struct DebugTrap {
    enum class Kind { None, Report, Ignored } kind = Kind::None;  // Ignored: a write under rwatch
    StopEvent event;
  };
  Result<void> insert_debug_point(Process& p, BreakpointType type, Addr addr, int len);
  Result<void> remove_debug_point(Process& p, BreakpointType type, Addr addr, int len);
  void sync_debug_registers(Process& p, LinuxThread& t);
  void clear_debug_registers(Process& p);
  void refresh_read_watches(Process& p);
  DebugTrap debug_trap(Process& p, LinuxThread& t);

  // --- signals GDB wants delivered without a stop (signals.cpp) ---
  bool pass_signal(Process& p, LinuxThread& t, int sig);

  // --- branch tracing (btrace.cpp) ---
  Result<std::unique_ptr<Collector>> make_collector(Tid tid, const BtraceConfig& config);
  Result<std::unique_ptr<Collector>> try_collector(Backend backend, Tid tid, const BtraceConfig& config);
  void collector_thread_born(Process& p, LinuxThread& t);
  // p's collector leaves it (its threads stopped), nothing of its own left in p.
  void release_collector(Process& p);
  // Runs `work` with the running threads of p that `which` picks stopped (non-stop): their
  // SIGSTOP is ours (GDB hears nothing) and they are held; after `work` they go on as GDB had
  // them. Events of others meanwhile are kept pending, as ever. False: p ended meanwhile (p is
  // gone, `work` did not run).
  bool with_threads_paused(Process& p, const std::function<bool(Tid)>& which, const std::function<void()>& work);
  // Whether a thread of p that `which` picks runs (started, not stopped).
  bool runs_any(const Process& p, const std::function<bool(Tid)>& which) const;
  bool runs_collector_code(const Process& p, Tid tid) const;
  // with_threads_paused for every thread that may run the collector's own code: its stop brings
  // it back to the program's.
  bool with_collector_threads_paused(Process& p, const std::function<void()>& work);
  // GDB changed p's code (an int3 in or out, its memory written): the collector's own code made
  // afresh (Collector::code_edited), with none of its threads running it.
  void collector_code_edited(Process& p);
  // A collector's own stop asked for its code to be made afresh (StopMeaning::OwnEdit): done
  // now, its threads paused, and the thread that asked goes on. Called where the server waits
  // for events, never inside an event's handling.
  void collector_edits_due();

  Kernel& kernel_;
  EventSource events_;
  std::map<Pid, std::unique_ptr<Process>> processes_;
  Pid current_ = 0;
  std::map<Tid, int> early_stops_;  // stops of threads/children whose parent's event is to come
  // fn(LinuxThread&) for every thread of every process.
  template <class Fn>
  void for_each_thread(Fn&& fn) {
    for (auto& [pid, p] : processes_) {
      for (auto& [tid, t] : p->threads) {
        fn(t);
      }
    }
  }
  PendingEvents pending_;           // stops and ends not reported yet, in the order they came
  bool non_stop_ = false;
  AllStopPhase all_stop_;   // all-stop: a resume in effect, threads being stopped, a ^C waiting
  bool report_exec_ = false;
  bool report_fork_ = false;
  bool report_vfork_ = false;
  bool report_thread_exits_ = false;
  bool report_no_resumed_ = false;
  std::set<int> pass_signals_;
  std::optional<std::set<int>> program_signals_;
  Backend btrace_backend_ = Backend::Auto;
  std::map<Backend, std::string> collector_problems_;  // why the last try of each backend's collector failed
  BtraceScope btrace_scope_;
  CollectorSetup collector_setup_;
  BtraceConfig btrace_config_;  // of the last enable: threads born while recording get it
  std::set<Tid> unclaimed_;     // traced since birth; GDB's Qbtrace:bts for them is a no-op
  EventLog* event_log_ = nullptr;
  bool keep_ended_histories_ = false;
  std::map<Pid, std::unique_ptr<Collector>> ended_collectors_;  // kept_ended_histories: by pid
  std::string thread_db_search_path_{kDefaultThreadDbSearchPath};
  trace::Experiment experiment_;  // the trace experiment (tracepoints.cpp)
  Pid traced_pid_ = 0;            // the process whose hits it collects while it runs
  std::set<Addr> tracepoint_sites_;  // its int3s placed there
  struct AgentLink {
    Pid pid = 0;                         // the process it was looked for in
    Addr control = 0;                    // its control block there (0: no agent)
    trace::AgentControl seen{};          // the block, as read when found
    Addr next_pad = 0;                   // free pad space: [next_pad, pads + pads_size)
    std::uint64_t generation = 0;        // of the tracepoints written for it
    std::vector<std::pair<std::uint32_t, Addr>> indices;  // its index i: (number, address)
    std::set<Addr> jumps;                // placed for the run
    bool collecting = false;             // the run's jumps are (or may still be) in place
  };
  AgentLink agent_;  // fast tracepoints (fast_tracepoints.cpp)
  void log_event(const char* kind, Pid pid, Tid tid, std::string detail = {}, int number = 0) {
    if (event_log_ != nullptr) {
      event_log_->add(kind, pid, tid, std::move(detail), number);
    }
  }
};

}  // namespace tracer
