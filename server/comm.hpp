// COMM, the first positional argument: where GDB connects.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/result.hpp"

namespace server {

struct Endpoint {
  enum class Kind { Tcp, Stdio, Unix, Device };
  Kind kind = Kind::Tcp;
  std::string host;         // Tcp: "127.0.0.1" when COMM named none
  std::uint16_t port = 0;   // Tcp: 0 picks a free port
  std::string path;         // Unix: the socket to create; Device: the serial line (a tty)
  bool loopback_only = true;
  int device_fd = -1;       // Device: open_device()'s descriptor
};

// ":1234" (loopback), "host:1234", "[::1]:1234", "tcp:host:1234", "-" (stdio),
// "unix:/path" (a unix socket), and, as gdbserver, anything else without ':' names a serial
// device ("/dev/ttyS0").
base::Result<Endpoint> parse_comm(std::string_view comm);

// Opens a Device endpoint's path for reading and writing, raw (no echo, no line editing) when
// it is a terminal. The error carries the system's reason, as gdbserver's "Could not open
// remote device: REASON." does.
base::Result<void> open_device(Endpoint& endpoint);

// A TCP endpoint's host is a name the system can resolve (getaddrinfo); the error carries
// gai_strerror's words. Other endpoints always pass.
base::Result<void> resolve_host(const Endpoint& endpoint);

}  // namespace server
