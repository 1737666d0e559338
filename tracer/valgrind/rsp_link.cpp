#include "tracer/valgrind/rsp_link.hpp"

#include "protocol/request_encoding.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include "tracer/linux/exec_child.hpp"

namespace tracer {
namespace {

base::Error link_error(const std::string& what) { return base::make_error(base::Errc::system, what); }

// pid, a child of ours, has ended (it stays a zombie for its parent to reap).
bool has_ended(pid_t pid) {
  siginfo_t info{};
  return ::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == pid;
}

// How often a wait looks whether the process the stub relays to is still there.
constexpr std::chrono::milliseconds kRelayCheck{100};

}  // namespace

base::Result<RspLink> RspLink::spawn(std::vector<std::string> argv, std::chrono::milliseconds timeout,
                                     pid_t relays_to) {
  if (argv.empty()) {
    return link_error("no stub to start");
  }
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) {
    return link_error(std::string("socketpair: ") + std::strerror(errno));
  }
  const std::vector<char*> args = exec_argv(argv);
  const pid_t child = ::fork();
  if (child < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    return link_error(std::string("fork: ") + std::strerror(errno));
  }
  if (child == 0) {
    const int null = ::open("/dev/null", O_WRONLY);
    ::dup2(fds[1], 0);
    ::dup2(fds[1], 1);
    ::dup2(null, 2);
    reset_signal_state_for_exec();
    ::execvp(args[0], args.data());
    ::_exit(127);
  }
  ::close(fds[1]);
  ::fcntl(fds[0], F_SETFL, O_NONBLOCK);
  RspLink link(child, fds[0]);
  link.relays_to_ = relays_to;
  // A stub may have a stop to say before it reads anything (Valgrind's, in a process forked
  // from one that was linked and running): an ack first lets it say it once, and every stop
  // before the answer to QStartNoAckMode is that one (asked again with `?` later).
  (void)link.write_all("+");
  auto ok = link.request("QStartNoAckMode", timeout);
  for (int i = 0; i < 8 && ok && (ok->starts_with("T") || ok->starts_with("S")); ++i) {
    ok = link.wait_packet(timeout);
  }
  if (!ok) {
    return std::move(ok).error();
  }
  if (*ok == "OK") {
    link.ack_mode_ = false;
  }
  link.relays_to_ = -1;
  return link;
}

RspLink::~RspLink() {
  if (fd_ >= 0) {
    ::close(fd_);  // the stub sees the end of its input and goes
  }
  if (child_ > 0) {
    int status = 0;
    for (int i = 0; i < 100 && ::waitpid(child_, &status, WNOHANG) == 0; ++i) {
      ::usleep(10000);
      if (i == 50) {
        ::kill(child_, SIGKILL);
      }
    }
  }
}

RspLink::RspLink(RspLink&& other) noexcept
    : child_(other.child_), fd_(other.fd_), ack_mode_(other.ack_mode_), decoder_(other.decoder_),
      packets_(std::move(other.packets_)) {
  other.child_ = -1;
  other.fd_ = -1;
}

base::Result<void> RspLink::write_all(std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd_, bytes.data(), bytes.size());
    if (n < 0 && errno == EAGAIN) {
      pollfd pfd{fd_, POLLOUT, 0};
      ::poll(&pfd, 1, 1000);
      continue;
    }
    if (n < 0 && errno != EINTR) {
      return link_error(std::string("write to the stub: ") + std::strerror(errno));
    }
    if (n > 0) {
      bytes.remove_prefix(static_cast<std::size_t>(n));
    }
  }
  return base::success();
}

base::Result<void> RspLink::send(std::string_view payload) { return write_all(protocol::encode_packet(payload, false)); }

base::Result<void> RspLink::interrupt() { return write_all("\x03"); }

base::Result<bool> RspLink::read_some(std::chrono::milliseconds timeout) {
  pollfd pfd{fd_, POLLIN, 0};
  const int ready = ::poll(&pfd, 1, static_cast<int>(timeout.count()));
  if (ready <= 0) {
    return true;  // nothing yet
  }
  char buf[65536];
  const ssize_t n = ::read(fd_, buf, sizeof buf);
  if (n == 0) {
    closed_ = true;
    return false;
  }
  if (n < 0) {
    if (errno == EAGAIN || errno == EINTR) {
      return true;
    }
    return link_error(std::string("read from the stub: ") + std::strerror(errno));
  }
  std::vector<protocol::FrameEvent> events;
  decoder_.feed(std::string_view(buf, static_cast<std::size_t>(n)), events);
  for (auto& e : events) {
    if (e.kind != protocol::FrameEvent::Kind::Packet) {
      continue;  // acks; a stub sends no interrupts and no bad packets worth a retry here
    }
    if (ack_mode_) {
      (void)write_all("+");
    }
    auto expanded = protocol::run_length_decode(e.payload);
    packets_.push_back(expanded ? std::move(*expanded) : std::move(e.payload));
  }
  return true;
}

std::optional<std::string> RspLink::take_packet() {
  if (packets_.empty()) {
    (void)read_some(std::chrono::milliseconds(0));
  }
  if (packets_.empty()) {
    return std::nullopt;
  }
  std::string p = std::move(packets_.front());
  packets_.pop_front();
  return p;
}

base::Result<std::string> RspLink::wait_packet(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (packets_.empty()) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      // (Its length puts no misspelling in the binary: GCC copies a literal of 17 to 31 bytes
      // as two overlapping 16-byte pieces, which lintian reads as one word: "did nott answer".)
      return base::sys_error("no answer from the stub in " + std::to_string(timeout.count()) + " ms", ETIMEDOUT);
    }
    if (relays_to_ > 0 && has_ended(relays_to_)) {
      return link_error("it ended before the link was made");
    }
    auto more = read_some(relays_to_ > 0 ? std::min(left, kRelayCheck) : left);
    if (!more) {
      return std::move(more).error();
    }
    if (!*more) {
      return link_error("the stub closed the link");
    }
  }
  std::string p = std::move(packets_.front());
  packets_.pop_front();
  return p;
}

base::Result<std::string> RspLink::read_xfer(const std::string& object, const std::string& annex,
                                             std::chrono::milliseconds timeout) {
  std::string out;
  for (;;) {
    const std::string packet = protocol::encode_xfer_read({object, annex, out.size(), 0xfff});
    auto reply = request(packet, timeout);
    if (!reply) {
      return std::move(reply).error();
    }
    if (reply->empty() || (reply->front() != 'l' && reply->front() != 'm')) {
      return base::make_error(reply->empty() ? base::Errc::unsupported : base::Errc::invalid,
                              "the stub answered '" + *reply + "' to " + packet);
    }
    // The data is binary: '#', '$', '}' and '*' in it come escaped.
    auto data = protocol::unescape_binary(std::string_view(*reply).substr(1));
    if (!data) {
      return std::move(data).error();
    }
    out.append(data->begin(), data->end());
    if (reply->front() == 'l') {
      return out;
    }
    if (data->empty()) {
      return base::make_error(base::Errc::invalid, "the stub sent no data for " + packet);
    }
  }
}

base::Result<std::string> RspLink::request(std::string_view payload, std::chrono::milliseconds timeout) {
  if (auto sent = send(payload); !sent) {
    return std::move(sent).error();
  }
  return wait_packet(timeout);
}

}  // namespace tracer
