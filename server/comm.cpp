#include "server/comm.hpp"

#include <netdb.h>

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
  auto colon = comm.rfind(':');
  if (comm.find('/') != std::string_view::npos || colon == std::string_view::npos) {
    if (comm.empty()) {
      return base::make_error(base::Errc::malformed, "empty COMM");
    }
    ep.kind = Endpoint::Kind::Unix;
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

}  // namespace server
