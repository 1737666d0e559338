// --btrace=dbt: the program runs under the dbt recorder (tracer/dbt, a Valgrind tool) with
// Valgrind's gdbserver on, and this Target drives it as GDB would, through vgdb: a RemoteTarget
// (registers, memory, breakpoints, threads, resuming and stops come from Valgrind), started by
// a ValgrindProcess, with branch history from the recorder's rings (DbtHistories) and libraries
// from the dynamic linker's list read through memory. One process, all-stop: no attach, fork
// following or non-stop (capabilities() says so, and the server refuses their packets).
//
// Following a tree (DbtOptions::follow_tree, triage): the recorder follows every descendant by
// itself; one about to die of a signal comes as a DyingDescendant, a ValgrindTarget of its own
// linked to it. The started program keeps its link until it execs; after that it is one of the
// tree like the others, and its end comes from its exit status.
#pragma once

#include <memory>

#include "tracer/valgrind/dbt_histories.hpp"
#include "tracer/valgrind/remote_target.hpp"
#include "tracer/valgrind/tree_events.hpp"
#include "tracer/valgrind/valgrind_process.hpp"

namespace tracer {

class ValgrindTarget final : public RemoteTarget {
 public:
  explicit ValgrindTarget(DbtOptions options);
  ~ValgrindTarget() override;

  // Valgrind's gdbserver catches syscalls; the recorder is the branch history.
  Capabilities capabilities() const override { return {.catch_syscalls = true, .branch_tracing = true}; }
  Result<Pid> launch(const LaunchSpec& spec) override;
  Result<void> attach(Pid pid) override;
  Result<void> detach() override;
  // Every process of the tree still alive (a descendant the recorder follows by itself too:
  // each comes through take_dying_descendant once reaped, with what it recorded); with the
  // started program gone, its descendants alone.
  Result<void> kill() override;
  bool has_process() const override { return RemoteTarget::has_process() || unlinked_; }
  std::optional<StopEvent> poll() override;
  Result<void> interrupt() override;  // not once it runs on unlinked: nothing to stop it through

  std::vector<ThreadInfo> threads() override;  // with the names the kernel would have given
  SignalAction signal_action(Tid tid, int sig) override;
  void set_event_log(EventLog* log) override { log_ = log; }

  Result<void> enable_btrace(Tid tid, const BtraceConfig& config) override;
  Result<void> disable_btrace(Tid tid) override;
  BranchTracer* branch_tracer(Tid tid) override { return histories_.tracer(tid); }
  void hand_over_history() override { histories_.hand_over(); }
  void keep_ended_histories() override { histories_.keep_ended(); }
  std::vector<std::pair<Tid, BranchTracer*>> ended_histories(Pid pid) override { return histories_.ended(pid); }
  std::vector<ThreadLife> thread_lives() const override {
    return DbtHistories::thread_lives(valgrind_->dir(), pid());
  }

  int descendants_fd() const override { return valgrind_->tree_log_fd(); }
  std::optional<DyingDescendant> take_dying_descendant() override;
  bool descendants_alive() override;

 private:
  // A process of the tree valgrind runs, to be linked to it where it waits (a descendant).
  explicit ValgrindTarget(std::shared_ptr<ValgrindProcess> valgrind);
  void stopped(StopEvent& event) override;
  std::optional<StopEvent> ended_unannounced() override;
  // Valgrind's process runs the recorder built for the program's instruction set.
  arch::x86::Isa program_isa() override;
  void process_ended() override { forget_process(true); }
  // The rings kept if asked, the link gone, the program reaped (wait) or left to run on.
  void forget_process(bool wait);
  // The started program's end, once it went on unlinked (after an exec): its exit status.
  std::optional<StopEvent> unlinked_end(bool wait);
  // What the recorder wrote about the tree since last time, into the event log.
  void log_tree();
  // Descendants whose parent died, reparented to us (triage, the tree's reaper), that ended:
  // reaped, and one SIGKILL killed told as its parent would have told it.
  void reap_orphans();
  // SIGKILL to each descendant whose end the recorder has not told (true: some were alive).
  bool kill_descendants();

  std::shared_ptr<ValgrindProcess> valgrind_;
  std::unique_ptr<TreeEvents> tree_events_;  // the started program's target reads them
  DbtHistories histories_;
  std::string program_name_;  // a thread's name where Valgrind's shows
  EventLog* log_ = nullptr;
  bool unlinked_ = false;     // the started program runs on without a link (it exec'd)
  std::vector<Pid> killed_;   // descendants reaped after SIGKILL, not handed out yet
  Pid root_ = 0;              // the started program (its end is its own target's)
};

}  // namespace tracer
