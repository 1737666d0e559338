// Where a process sits in the tree a run made, from the event log's forks, vforks and execs:
// the path from the program triage started to it, each step named by the program it ran last
// (`sh 100 -> make 101 -> test_foo 130`).
#pragma once

#include <string>
#include <vector>

#include "tracer/event_log.hpp"
#include "tracer/types.hpp"

namespace server::triage {

struct TreeStep {
  std::string name;  // the file name of the program it ran (after its last exec, if any)
  tracer::Pid pid = 0;
  bool operator==(const TreeStep&) const = default;
};

// root first, pid last; just the root's step when pid is the root or unknown.
std::vector<TreeStep> tree_path(const std::vector<tracer::TraceEvent>& events, tracer::Pid root,
                                const std::string& root_program, tracer::Pid pid);

// "sh 100 -> crash 130".
std::string tree_text(const std::vector<TreeStep>& path);

}  // namespace server::triage
