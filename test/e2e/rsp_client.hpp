// A tiny GDB remote-serial-protocol client for packet-level tests: frames packets with their
// checksum, reads acks and replies (expanding run-length encoding), acks what it receives.
// Every read has a timeout; nothing blocks forever.
#pragma once

#include <chrono>
#include <optional>
#include <string>

namespace e2e {

class RspClient {
 public:
  using ms = std::chrono::milliseconds;

  // Connects to 127.0.0.1:port (retrying for up to `timeout`). Throws on failure.
  explicit RspClient(int port, ms timeout = ms(3000));
  ~RspClient();
  RspClient(const RspClient&) = delete;
  RspClient& operator=(const RspClient&) = delete;

  // "$payload#cs" with the correct checksum (payload sent as is, no escaping).
  static std::string frame(const std::string& payload);
  // Sends bytes exactly as given. False if the connection is gone.
  bool send_raw(const std::string& bytes);
  bool send_packet(const std::string& payload) { return send_raw(frame(payload)); }

  // Next '+' or '-' from the server, or nullopt on timeout/EOF. Packets are not consumed.
  std::optional<char> read_ack(ms timeout = ms(2000));
  // Next packet's payload (RLE expanded); acks it with '+'. Skips stray acks.
  // nullopt on timeout, EOF or a reply with a bad checksum.
  std::optional<std::string> read_packet(ms timeout = ms(2000));
  // Next notification's payload ("%Stop:T05...#cs" gives "Stop:T05..."); not acked. Packets
  // before it are skipped.
  std::optional<std::string> read_notification(ms timeout = ms(2000));
  // send_packet + expect '+' + read_packet. nullopt if any step fails.
  std::optional<std::string> request(const std::string& payload, ms timeout = ms(2000));

  // Hangs up, as a GDB that goes away.
  void close();
  // True once the server closed the connection (or close() was called).
  bool closed() const { return closed_; }

 private:
  // A '$' packet or '%' notification, checksum checked, run-length encoding expanded.
  std::optional<std::string> read_frame(char start, ms timeout);
  // One byte, or nullopt on timeout/EOF.
  std::optional<char> get(std::chrono::steady_clock::time_point deadline);

  int fd_ = -1;
  bool closed_ = false;
  std::string buf_;  // received, not yet consumed
};

}  // namespace e2e
