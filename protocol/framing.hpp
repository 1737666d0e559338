// Packet framing: $payload#cc, +/- acks, 0x03 interrupts, binary escapes, run-length encoding.
// Pure: bytes in, events out. The session owns the socket and decides what to send back.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/hex.hpp"

namespace protocol {

// Largest payload we accept (and advertise as PacketSize). Replies may be as long as asked.
inline constexpr std::size_t kMaxPacketSize = 0x20000;

struct FrameEvent {
  enum class Kind {
    Packet,       // a whole packet with a good checksum: payload holds it (escapes not undone)
    BadChecksum,  // a whole packet whose checksum did not match: answer '-'
    Overlong,     // a packet longer than kMaxPacketSize: dropped; answer with an error reply
    Interrupt,    // a raw 0x03 outside a packet
    Ack,          // '+'
    Nack,         // '-': retransmit the last packet
  };
  Kind kind = Kind::Packet;
  std::string payload;
};

// Accepts bytes split anywhere; never blocks, owns no socket. Bytes outside a packet other
// than + - 0x03 are skipped (GDB sends a stray '+' after QStartNoAckMode).
class FrameDecoder {
 public:
  // Appends the events completed by these bytes to out.
  void feed(std::string_view bytes, std::vector<FrameEvent>& out);
  // True while a packet has started but not ended.
  bool in_packet() const { return state_ != State::Idle; }

 private:
  enum class State { Idle, Payload, Checksum1, Checksum2 };
  State state_ = State::Idle;
  std::string payload_;
  bool overlong_ = false;
  std::uint8_t sum_ = 0;
  char check_hi_ = 0;
};

// Sum of the bytes mod 256.
std::uint8_t checksum(std::string_view payload);
// "$" + payload (run-length encoded when rle) + "#cc". Payload must already be escaped.
std::string encode_packet(std::string_view payload, bool rle = true);
// A notification (non-stop): "%" + payload + "#cc".
std::string encode_notification(std::string_view payload);
// Run-length encoding as GDB reads it: runs of 4+ become c*N, never producing # or $.
std::string run_length_encode(std::string_view payload);
// The payload as sent before run_length_encode (what a server's replies need undone); a '*'
// with nothing before it or after it is an error.
Result<std::string> run_length_decode(std::string_view payload);

// Binary escapes of X, vFile:pwrite, qXfer and vFile:pread data: # $ } * -> '}' (byte ^ 0x20).
std::string escape_binary(std::span<const std::uint8_t> bytes);
std::string escape_binary(std::string_view bytes);
// Undoes escape_binary; a trailing lone '}' is malformed.
Result<Bytes> unescape_binary(std::string_view escaped);
// Escapes as many leading bytes as fit in max_out characters; returns how many bytes fitted.
std::size_t escape_binary_prefix(std::span<const std::uint8_t> bytes, std::size_t max_out, std::string& out);

}  // namespace protocol
