// What Valgrind says (its banner, its errors, its fatal-signal messages): a file for one
// process, or, for a process tree, a FIFO every Valgrind of the tree writes into (its lines start
// with ==PID==). Kept for error messages; read for the processes that wait for a debugger at a
// fatal signal ("(action on fatal signal) vgdb me ...").
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.hpp"
#include "tracer/types.hpp"

namespace tracer {

// The process a line of Valgrind's log says waits for a debugger at a fatal signal.
std::optional<Pid> waits_at_fatal_signal(std::string_view line);

class ValgrindLog {
 public:
  ValgrindLog() = default;
  ~ValgrindLog();
  ValgrindLog(const ValgrindLog&) = delete;
  ValgrindLog& operator=(const ValgrindLog&) = delete;

  // Valgrind writes to path, a plain file (one process) ...
  void use_file(const std::string& path);
  // ... or a FIFO made here and read as it fills (a tree: Valgrind would block on a full one).
  base::Result<void> use_fifo(const std::string& path);
  const std::string& path() const { return path_; }
  // Readable when a Valgrind of the tree wrote (-1 for a file).
  int fd() const { return fd_; }
  // The processes that began to wait at a fatal signal since the last call.
  std::vector<Pid> take_fatal_waits();
  // What Valgrind said lately (the last 64 KiB).
  std::string text();

 private:
  void drain();

  std::string path_;
  int fd_ = -1;
  std::string kept_;     // FIFO: what was read, its end
  std::string partial_;  // FIFO: a line not ended yet
  std::vector<Pid> waiting_;
};

}  // namespace tracer
