// SIGCHLD through a signalfd, statuses through a non-blocking waitpid drain.
#include "tracer/linux/event_source.hpp"

#include <poll.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>

#include "base/log.hpp"

namespace tracer {

EventSource::EventSource() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGCHLD);
  sigprocmask(SIG_BLOCK, &set, nullptr);
  fd_ = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
}

EventSource::~EventSource() {
  if (fd_ >= 0) {
    ::close(fd_);
  }
}

std::vector<WaitStatus> EventSource::drain() {
  // SIGCHLD is a standard signal: at most one is pending for the process and one for this
  // thread (kick()), so one read of two empties the signalfd (another would only say EAGAIN).
  // The statuses themselves all come from waitpid below.
  signalfd_siginfo info[2];
  (void)::read(fd_, info, sizeof info);
  std::vector<WaitStatus> out;
  for (;;) {
    int st = 0;
    Tid tid = ::waitpid(-1, &st, __WALL | WNOHANG);
    if (tid > 0) {
      base::logf(base::LogCat::ptrace, "waitpid: {} status {:#x}", tid, st);
      out.push_back({tid, st});
      continue;
    }
    if (tid < 0 && errno == EINTR) {
      continue;
    }
    return out;  // 0: nothing more now; ECHILD: no children at all
  }
}

void EventSource::wait_readable(std::chrono::milliseconds timeout) const {
  pollfd pfd{fd_, POLLIN, 0};
  (void)::poll(&pfd, 1, static_cast<int>(timeout.count()));
}

void EventSource::kick() const { ::syscall(SYS_tgkill, ::getpid(), ::gettid(), SIGCHLD); }

}  // namespace tracer
