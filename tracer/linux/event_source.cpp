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
namespace {

const int kTickSignal = SIGRTMIN;

}  // namespace

EventSource::EventSource(Kernel& kernel) : kernel_(kernel) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGCHLD);
  sigprocmask(SIG_BLOCK, &set, nullptr);
  fd_ = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
  // The window's tick: a signal to this thread only, whose handler does nothing but end a
  // waitpid (no SA_RESTART).
  struct sigaction tick {};
  tick.sa_handler = [](int) {};
  sigemptyset(&tick.sa_mask);
  sigaction(kTickSignal, &tick, nullptr);
  sigevent to_me{};
  to_me.sigev_notify = SIGEV_THREAD_ID;
  to_me.sigev_signo = kTickSignal;
  to_me._sigev_un._tid = ::gettid();
  have_timer_ = timer_create(CLOCK_MONOTONIC, &to_me, &tick_timer_) == 0;
}

EventSource::~EventSource() {
  if (have_timer_) {
    timer_delete(tick_timer_);
  }
  if (fd_ >= 0) {
    ::close(fd_);
  }
}

EventSource::Window::Window(EventSource& source, std::chrono::microseconds tick) : source_(source) {
  const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(tick).count();
  const timespec every{static_cast<time_t>(ns / 1'000'000'000), static_cast<long>(ns % 1'000'000'000)};
  const itimerspec spec{every, every};
  if (source_.have_timer_) {
    timer_settime(source_.tick_timer_, 0, &spec, nullptr);
  }
}

EventSource::Window::~Window() {
  if (source_.have_timer_) {
    const itimerspec off{};
    timer_settime(source_.tick_timer_, 0, &off, nullptr);
  }
}

std::optional<WaitStatus> EventSource::wait_one() {
  // Without a timer nothing would end the wait: look without blocking instead.
  return kernel_.wait_any(have_timer_);  // nullopt: the tick (EINTR), or no children at all
}

std::vector<WaitStatus> EventSource::drain() {
  // SIGCHLD is a standard signal: at most one is pending for the process and one for this
  // thread (kick()), so one read of two empties the signalfd (another would only say EAGAIN).
  // The statuses themselves all come from waitpid below.
  signalfd_siginfo info[2];
  [[maybe_unused]] const ssize_t drained = ::read(fd_, info, sizeof info);  // EAGAIN is as good
  std::vector<WaitStatus> out;
  while (auto status = kernel_.wait_any(false)) {
    out.push_back(*status);
  }
  return out;
}

void EventSource::wait_readable(std::chrono::milliseconds timeout) const {
  pollfd pfd{fd_, POLLIN, 0};
  (void)::poll(&pfd, 1, static_cast<int>(timeout.count()));
}

void EventSource::kick() const { ::syscall(SYS_tgkill, ::getpid(), ::gettid(), SIGCHLD); }

}  // namespace tracer
