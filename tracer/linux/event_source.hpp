// The one place that calls waitpid for the running program: a SIGCHLD signalfd the server
// watches, and a non-blocking drain of every waiting status (waitpid(-1, __WALL | WNOHANG)).
// Nothing in the core waits for one thread: each status goes to the thread it belongs to.
#pragma once

#include <chrono>
#include <optional>
#include <vector>

#include <ctime>

#include "tracer/linux/kernel.hpp"
#include "tracer/types.hpp"

namespace tracer {

class EventSource {
 public:
  // Blocks SIGCHLD for this thread and opens the signalfd; statuses come from kernel.
  explicit EventSource(Kernel& kernel);
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

  // The hot path of collectors that stop at every branch (one system call per status, no
  // signalfd read): while a window is open, wait_one() blocks in waitpid until a status comes
  // or the window's timer ticks. SIGCHLDs still reach the fd: the server's loop drains what the
  // window left.
  class Window {
   public:
    Window(EventSource& source, std::chrono::microseconds tick);
    ~Window();
    Window(const Window&) = delete;
    Window& operator=(const Window&) = delete;

   private:
    EventSource& source_;
  };
  std::optional<WaitStatus> wait_one();

 private:
  Kernel& kernel_;
  int fd_ = -1;
  timer_t tick_timer_{};
  bool have_timer_ = false;
};

}  // namespace tracer
