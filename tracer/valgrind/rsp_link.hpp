// A remote-protocol link to a debug stub that runs as a child process speaking RSP on its
// stdin and stdout: vgdb, Valgrind's relay to the gdbserver inside a program running under
// Valgrind. The server is GDB's side here: packets out, replies and stop replies in.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.hpp"
#include "protocol/framing.hpp"

namespace tracer {

class RspLink {
 public:
  // Starts argv (its stderr goes to /dev/null) and asks for no-ack mode. relays_to: a child of
  // ours the stub relays to (vgdb's Valgrind); when it ends first, the wait ends at once.
  static base::Result<RspLink> spawn(std::vector<std::string> argv,
                                     std::chrono::milliseconds timeout = std::chrono::seconds(10),
                                     pid_t relays_to = -1);
  ~RspLink();  // closes the link and reaps the child
  RspLink(RspLink&& other) noexcept;
  RspLink& operator=(RspLink&&) = delete;
  RspLink(const RspLink&) = delete;
  RspLink& operator=(const RspLink&) = delete;

  // Sends payload and waits for its reply (run-length encoding undone).
  base::Result<std::string> request(std::string_view payload,
                                    std::chrono::milliseconds timeout = std::chrono::seconds(10));
  // A whole qXfer object (qXfer:OBJECT:read:ANNEX:OFFSET,LENGTH until `l`), binary escapes
  // undone.
  base::Result<std::string> read_xfer(const std::string& object, const std::string& annex,
                                      std::chrono::milliseconds timeout = std::chrono::seconds(10));
  // Sends payload and does not wait: `c` and `s`, whose reply is the next stop.
  base::Result<void> send(std::string_view payload);
  // The next packet from the stub: one already read, or one arriving within timeout.
  base::Result<std::string> wait_packet(std::chrono::milliseconds timeout);
  // A packet that has arrived already, if any (never blocks).
  std::optional<std::string> take_packet();
  // The stub closed its end (it exited): no packet will come any more.
  bool closed() const { return closed_; }
  // ^C: the stub stops the program and answers the pending `c` with a stop reply.
  base::Result<void> interrupt();
  // Readable when the stub has sent something (for an event loop).
  int fd() const { return fd_; }
  pid_t child() const { return child_; }

 private:
  RspLink(pid_t child, int fd) : child_(child), fd_(fd) {}
  base::Result<void> write_all(std::string_view bytes);
  // Reads what is there (waiting up to timeout for the first byte); false at end of link.
  base::Result<bool> read_some(std::chrono::milliseconds timeout);

  pid_t child_ = -1;
  int fd_ = -1;
  bool ack_mode_ = true;
  bool closed_ = false;
  pid_t relays_to_ = -1;  // while spawn waits: the process whose end ends the wait
  protocol::FrameDecoder decoder_;
  std::deque<std::string> packets_;
};

}  // namespace tracer
