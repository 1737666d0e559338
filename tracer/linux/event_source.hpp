// The one place that calls waitpid for the running program: a SIGCHLD signalfd the server
// watches, and a non-blocking drain of every waiting status (waitpid(-1, __WALL | WNOHANG)).
// Nothing in the core waits for one thread: each status goes to the thread it belongs to.
#pragma once

#include <chrono>
#include <vector>

#include "tracer/types.hpp"

namespace tracer {

struct WaitStatus {
  Tid tid = 0;
  int status = 0;
};

class EventSource {
 public:
  // Blocks SIGCHLD for this thread and opens the signalfd.
  EventSource();
  ~EventSource();
  EventSource(const EventSource&) = delete;
  EventSource& operator=(const EventSource&) = delete;

  int fd() const { return fd_; }
  // Every status waiting now, in the order the kernel gives them; never blocks.
  std::vector<WaitStatus> drain();
  // Sleeps until a child event may be waiting, or until the timeout (for the few places that
  // must finish synchronously: detach, kill, the server going away).
  void wait_readable(std::chrono::milliseconds timeout) const;
  // Makes the fd readable so the server calls poll() although no child changed.
  void kick() const;

 private:
  int fd_ = -1;
};

}  // namespace tracer
