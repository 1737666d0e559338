#include "test/e2e/rsp_client.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <thread>

namespace e2e {
namespace {

using Clock = std::chrono::steady_clock;

int hex_digit(char c) {
  if (c >= '0' && c <= '9') {
    return c - '0';
  }
  if (c >= 'a' && c <= 'f') {
    return c - 'a' + 10;
  }
  if (c >= 'A' && c <= 'F') {
    return c - 'A' + 10;
  }
  return -1;
}

}  // namespace

RspClient::RspClient(int port, ms timeout) {
  auto deadline = Clock::now() + timeout;
  while (true) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd_ < 0) {
      throw std::runtime_error(std::string("socket: ") + std::strerror(errno));
    }
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    sa.sin_port = htons(static_cast<uint16_t>(port));
    if (::connect(fd_, reinterpret_cast<sockaddr*>(&sa), sizeof sa) == 0) {
      int one = 1;
      ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      return;
    }
    int err = errno;
    ::close(fd_);
    fd_ = -1;
    if (Clock::now() >= deadline) {
      throw std::runtime_error("connect to 127.0.0.1:" + std::to_string(port) + ": " +
                               std::strerror(err));
    }
    std::this_thread::sleep_for(ms(20));
  }
}

RspClient::~RspClient() { close(); }

void RspClient::close() {
  if (fd_ >= 0) {
    ::close(fd_);
    fd_ = -1;
  }
  closed_ = true;
}

std::string RspClient::frame(const std::string& payload) {
  unsigned sum = 0;
  for (unsigned char c : payload) {
    sum += c;
  }
  char cs[3];
  std::snprintf(cs, sizeof cs, "%02x", sum & 0xffu);
  return "$" + payload + "#" + cs;
}

bool RspClient::send_raw(const std::string& bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::send(fd_, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) {
        continue;
      }
      closed_ = true;
      return false;
    }
    done += static_cast<size_t>(n);
  }
  return true;
}

std::optional<char> RspClient::get(Clock::time_point deadline) {
  while (buf_.empty()) {
    if (closed_) {
      return std::nullopt;
    }
    auto left = std::chrono::duration_cast<ms>(deadline - Clock::now()).count();
    if (left <= 0) {
      return std::nullopt;
    }
    pollfd p{fd_, POLLIN, 0};
    int rc = ::poll(&p, 1, static_cast<int>(left));
    if (rc < 0 && errno != EINTR) {
      closed_ = true;
      return std::nullopt;
    }
    if (rc <= 0) {
      continue;
    }
    char tmp[65536];
    ssize_t n = ::recv(fd_, tmp, sizeof tmp, 0);
    if (n <= 0) {
      if (n < 0 && errno == EINTR) {
        continue;
      }
      closed_ = true;
      return std::nullopt;
    }
    buf_.append(tmp, static_cast<size_t>(n));
  }
  char c = buf_.front();
  buf_.erase(0, 1);
  return c;
}

std::optional<char> RspClient::read_ack(ms timeout) {
  auto deadline = Clock::now() + timeout;
  while (auto c = get(deadline)) {
    if (*c == '+' || *c == '-') {
      return c;
    }
    if (*c == '$') {
      buf_.insert(0, 1, '$');  // a packet came first: leave it for read_packet
      return std::nullopt;
    }
  }
  return std::nullopt;
}

std::optional<std::string> RspClient::read_packet(ms timeout) { return read_frame('$', timeout); }

std::optional<std::string> RspClient::read_notification(ms timeout) { return read_frame('%', timeout); }

std::optional<std::string> RspClient::read_frame(char start, ms timeout) {
  auto deadline = Clock::now() + timeout;
  // Skip acks and noise up to the start of a packet.
  while (true) {
    auto c = get(deadline);
    if (!c) {
      return std::nullopt;
    }
    if (*c == start) {
      break;
    }
  }
  std::string raw;
  unsigned sum = 0;
  while (true) {
    auto c = get(deadline);
    if (!c) {
      return std::nullopt;
    }
    if (*c == '#') {
      break;
    }
    raw += *c;
    sum += static_cast<unsigned char>(*c);
  }
  auto h = get(deadline);
  auto l = h ? get(deadline) : std::nullopt;
  if (!h || !l || hex_digit(*h) < 0 || hex_digit(*l) < 0 ||
      static_cast<unsigned>(hex_digit(*h) * 16 + hex_digit(*l)) != (sum & 0xffu)) {
    send_raw("-");
    return std::nullopt;
  }
  if (start == '$') {
    send_raw("+");  // notifications are never acknowledged
  }
  // Expand run-length encoding: X*n repeats X (n - 29) more times.
  std::string out;
  for (size_t i = 0; i < raw.size(); ++i) {
    int repeat = i + 1 < raw.size() ? static_cast<unsigned char>(raw[i + 1]) - 29 : -1;
    if (raw[i] == '*' && !out.empty() && repeat >= 0) {
      out.append(static_cast<size_t>(repeat), out.back());
      ++i;
    } else {
      out += raw[i];
    }
  }
  return out;
}

std::optional<std::string> RspClient::request(const std::string& payload, ms timeout) {
  if (!send_packet(payload)) {
    return std::nullopt;
  }
  auto ack = read_ack(timeout);
  if (ack != '+') {
    return std::nullopt;
  }
  return read_packet(timeout);
}

}  // namespace e2e
