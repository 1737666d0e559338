// --btrace=inproc: the in-process recorder (docs/design.md, "The in-process recorder"). A traced
// thread runs in the recorder's code cache inside the program, which writes each taken branch
// into the thread's ring with no stop; at each of its stops the thread is moved back to the
// program's code and what it recorded joins its history here, so that the core, GDB and the
// history only ever see the program's own addresses. What the cache cannot run (the core's
// single-steps, a signal's way into its handler) is stepped and recorded as SoftStep records
// it; a run the recorder did not see (native code it left the cache for) is a gap. While GDB
// catches system calls a thread stays in the cache, and is moved back to the program's code at
// a syscall stop GDB hears of. The collector owns the process's link to the recorder
// (RecorderPort) and tells it what the core's lifecycle events mean for it.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <set>

#include "tracer/btrace/soft_step.hpp"

namespace tracer {

class InprocCollector final : public SoftStepCollector {
 public:
  // port: its process's link to the recorder; make_port: how a fork child's collector gets one.
  InprocCollector(std::unique_ptr<RecorderPort> port, RecorderPortMaker make_port)
      : port_(std::move(port)), make_port_(std::move(make_port)) {}

  std::string_view backend() const override { return backend_name(Backend::Inproc); }
  bool records_in_process() const override { return true; }
  bool wants_step(Tid tid, Addr pc, int sig, bool core_steps, CollectorHost& host) override;
  StopMeaning thread_stopped(Tid tid, CollectorHost& host) override;
  void thread_ended(Tid tid, CollectorHost& host) override;
  bool syscall_stopped(Tid tid, bool entry, bool caught, CollectorHost& host) override;
  void code_changed() override;

  bool runs_own_code(Tid tid) const override { return port_ && port_->inside(tid); }
  void code_edited() override;
  std::optional<std::string> cannot_record(Tid tid) override;
  std::optional<Addr> forked(Tid parent, Tid child) override;
  std::unique_ptr<Collector> fork_heir(CollectorHost& child) override;
  void exec_happened() override;
  void release() override;
  void process_gone() override { port_.reset(); }

 protected:
  base::Result<std::unique_ptr<BranchTracer>> make(Tid tid, const BtraceConfig& config) override;

 private:
  // What thread_stopped does for a thread in the cache; false when it cannot leave yet. `asked`:
  // it had stopped by the recorder's own request.
  bool bring_out(Tid tid, SoftStepTracer& s, RecorderPort& port, CollectorHost& host, bool* asked = nullptr);
  // What it recorded since the last take joins its history.
  void take_recorded(Tid tid, SoftStepTracer& s, RecorderPort& port);
  // It stands in the program's code again, where `left` says: the straight run up to there, or
  // a gap for native code it ran (none when that was only the system call it stopped in).
  void came_out(Tid tid, SoftStepTracer& s, const RecorderLeft& left, bool only_syscalled, CollectorHost& host);
  // Where a thread that ran natively stopped.
  std::optional<Addr> native_stop(Tid tid, CollectorHost& host);
  // The thread ran from `start` (a branch's target, or where it entered) straight on to `pc`:
  // the instruction before pc is the last that ran (a signal's delivery branches from there).
  void ran_up_to(SoftStepTracer& s, Addr start, Addr pc, CollectorHost& host);
  std::map<Tid, Addr> run_start_;  // where each thread's straight run in the cache began
  std::map<Tid, Addr> native_;  // running natively, unrecorded, from there until their next stop (a gap there)
  std::optional<Addr> entry_site_;  // the int3 at the program's entry they run natively to at most
  std::set<Tid> waiting_;  // stopped in the cache, waiting for the translation lock a stopped thread holds
  std::unique_ptr<RecorderPort> port_;  // nullptr once the process is gone
  RecorderPortMaker make_port_;
};

// "the in-process recorder cannot come in: " and why.
std::string recorder_refusal(const std::string& why);

base::Result<std::unique_ptr<Collector>> make_inproc_collector(const CollectorRequest& request);

}  // namespace tracer
