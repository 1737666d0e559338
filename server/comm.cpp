#include "server/comm.hpp"

#include <fcntl.h>
#include <netdb.h>
#include <termios.h>
#include <unistd.h>

#include <charconv>

namespace server {
namespace {

bool is_loopback(std::string_view host) {
  return host == "localhost" || host == "::1" || host.starts_with("127.");
}

}  // namespace

base::Result<Endpoint> parse_comm(std::string_view comm) {
  Endpoint ep;
  if (comm == "-" || comm == "stdio") {
    ep.kind = Endpoint::Kind::Stdio;
    return ep;
  }
  if (comm.starts_with("tcp:") || comm.starts_with("tcp4:") || comm.starts_with("tcp6:")) {
    comm.remove_prefix(comm.find(':') + 1);
  }
  if (comm.starts_with("unix:")) {
    comm.remove_prefix(5);
    if (comm.empty()) {
      return base::make_error(base::Errc::malformed, "unix: needs the path of the socket to create");
    }
    ep.kind = Endpoint::Kind::Unix;
    ep.path = std::string(comm);
    return ep;
  }
  auto colon = comm.rfind(':');
  if (colon == std::string_view::npos) {
    if (comm.empty()) {
      return base::make_error(base::Errc::malformed, "empty COMM");
    }
    ep.kind = Endpoint::Kind::Device;
    ep.path = std::string(comm);
    return ep;
  }
  std::string_view host = comm.substr(0, colon);
  std::string_view port = comm.substr(colon + 1);
  unsigned value = 0;
  auto [ptr, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
  if (port.empty() || ec != std::errc() || ptr != port.data() + port.size() || value > 65535) {
    return base::make_error(base::Errc::malformed, "'" + std::string(port) + "' is not a port number");
  }
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  ep.kind = Endpoint::Kind::Tcp;
  ep.port = static_cast<std::uint16_t>(value);
  ep.host = host.empty() ? "127.0.0.1" : (host == "localhost" ? "127.0.0.1" : std::string(host));
  ep.loopback_only = is_loopback(ep.host);
  return ep;
}

base::Result<void> resolve_host(const Endpoint& endpoint) {
  if (endpoint.kind != Endpoint::Kind::Tcp) {
    return base::success();
  }
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (int err = ::getaddrinfo(endpoint.host.c_str(), nullptr, &hints, &found); err != 0) {
    return base::make_error(base::Errc::invalid, ::gai_strerror(err));
  }
  ::freeaddrinfo(found);
  return base::success();
}

base::Result<void> open_device(Endpoint& endpoint) {
  const int fd = ::open(endpoint.path.c_str(), O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) {
    return base::sys_error(endpoint.path);
  }
  termios mode{};
  if (::tcgetattr(fd, &mode) == 0) {
    ::cfmakeraw(&mode);
    if (::tcsetattr(fd, TCSANOW, &mode) != 0) {
      const int err = errno;
      ::close(fd);
      return base::sys_error(endpoint.path, err);
    }
  }
  endpoint.device_fd = fd;
  return base::success();
}

}  // namespace server
