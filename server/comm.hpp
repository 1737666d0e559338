// COMM, the first positional argument: where GDB connects.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/result.hpp"

namespace server {

struct Endpoint {
  enum class Kind { Tcp, Stdio, Unix };
  Kind kind = Kind::Tcp;
  std::string host;         // Tcp: "127.0.0.1" when COMM named none
  std::uint16_t port = 0;   // Tcp: 0 picks a free port
  std::string path;         // Unix
  bool loopback_only = true;
};

// ":1234" (loopback), "host:1234", "[::1]:1234", "tcp:host:1234", "-" (stdio), "/path" (unix).
base::Result<Endpoint> parse_comm(std::string_view comm);

// A TCP endpoint's host is a name the system can resolve (getaddrinfo); the error carries
// gai_strerror's words. Other endpoints always pass.
base::Result<void> resolve_host(const Endpoint& endpoint);

}  // namespace server
