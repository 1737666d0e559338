// What the dbt recorder says happened to the processes of a tree (DIR/hsdbt.events, written
// with --follow-tree: starts, forks, execs, ends), read as it grows and put into the event log
// as the ptrace collectors put theirs (fork, exec, exit, killed).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "tracer/event_log.hpp"
#include "tracer/types.hpp"

namespace tracer {

struct TreeEvent {
  enum class Kind { Start, Fork, Exec, Exit, Killed, Native, Reaped } kind = Kind::Start;
  Pid pid = 0;
  Pid parent = 0;
  int status = 0;                        // exit: its status; reaped: the wait status
  std::uint64_t t_ns = 0;                // CLOCK_MONOTONIC
  std::vector<std::string> command;      // start, exec: the program, then its arguments
};

// The records in bytes (whole ones; an unknown kind is skipped).
std::vector<TreeEvent> parse_tree_events(std::string_view bytes);

// Into the log: forks and execs of every process, ends of all but `root` (whose end the
// caller logs from its exit status); an exec that runs natively is an `exec` and an
// `unrecorded` event saying why.
void log_tree_events(const std::vector<TreeEvent>& events, Pid root, EventLog& log);

class TreeEvents {
 public:
  explicit TreeEvents(std::string path) : path_(std::move(path)) {}
  // The records appended since the last call.
  std::vector<TreeEvent> read_new();
  // The program and arguments pid runs (as it last exec'd, or as its parent did before the
  // fork), while it lives, as far as the records read so far say.
  std::vector<std::string> command_of(Pid pid) const;
  void forget(Pid pid);  // a process reaped after SIGKILL, once reported
  // The processes whose end the records have not told yet (alive, or killed outright and
  // not reaped by their parent).
  std::vector<Pid> unended() const;

 private:
  std::string path_;
  std::size_t offset_ = 0;
  std::map<Pid, std::vector<std::string>> commands_;
};

}  // namespace tracer
