// The dbt recorder's histories of the program, one ring per thread in the work directory: a
// BranchTracer per thread GDB (or triage) traces, handed over to the next GDB, and kept past
// the process when asked (triage of a program killed from outside).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "base/result.hpp"
#include "tracer/btrace/dbt_tracer.hpp"
#include "tracer/types.hpp"

namespace tracer {

class DbtHistories {
 public:
  // Qbtrace:bts for tid of pid, whose rings are in dir. threads: who is there now (asked when
  // the first thread starts being traced: GDB's history of the others begins now).
  // config: GDB's buffer, what it sees of the ring.
  base::Result<void> enable(const std::string& dir, Pid pid, Tid tid, const BtraceConfig& config,
                            const std::function<std::vector<ThreadInfo>()>& threads);
  base::Result<void> disable(Tid tid);
  BranchTracer* tracer(Tid tid);
  // The next GDB's Qbtrace:bts for a thread traced already keeps its history.
  void hand_over();
  void keep_ended() { keep_ended_ = true; }
  // Every thread's history goes back to its birth (triage of a process met where it dies).
  void read_from_birth() { from_birth_ = true; }
  // pid ended: its rings are kept (mapped before the directory goes) if keep_ended(); every
  // tracer of the live process goes.
  void process_ended(const std::string& dir, Pid pid);
  std::vector<std::pair<Tid, BranchTracer*>> ended(Pid pid);
  // When each thread the recorder saw began and ended.
  static std::vector<ThreadLife> thread_lives(const std::string& dir, Pid pid);

 private:
  std::map<Tid, std::unique_ptr<DbtTracer>> tracers_;
  std::set<Tid> handed_over_;        // traced before GDB came: its enable keeps the history
  std::set<Tid> recording_threads_;  // the threads there when recording began
  bool keep_ended_ = false;
  bool from_birth_ = false;
  std::map<Pid, std::map<Tid, std::unique_ptr<DbtTracer>>> ended_;  // every ring of an ended process
};

}  // namespace tracer
