// Packet framing: the byte-level decoder and the encoders for packets, RLE and binary escapes.
#include "protocol/framing.hpp"

#include <algorithm>

namespace protocol {

namespace {

constexpr char kInterrupt = 0x03;
constexpr char kEscape = '}';
// gdbserver never lets a run exceed 97 characters, so the count character stays printable.
constexpr std::size_t kMaxRun = 97;
constexpr int kRleBias = 29;


bool needs_escape(std::uint8_t b) { return b == '#' || b == '$' || b == '}' || b == '*'; }

// Characters that must never be run-length encoded (framing or escape meaning).
bool rle_forbidden(char c) { return c == '#' || c == '$' || c == '}' || c == '*'; }

std::string frame(char start, std::string_view body) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::uint8_t sum = checksum(body);
  std::string out;
  out.reserve(body.size() + 4);
  out.push_back(start);
  out.append(body);
  out.push_back('#');
  out.push_back(kDigits[sum >> 4]);
  out.push_back(kDigits[sum & 0xf]);
  return out;
}

}  // namespace

void FrameDecoder::feed(std::string_view bytes, std::vector<FrameEvent>& out) {
  for (char c : bytes) {
    if (c == '$') {
      // A '$' always starts a packet; inside one it restarts it (GDB retransmits after garbage).
      state_ = State::Payload;
      payload_.clear();
      overlong_ = false;
      sum_ = 0;
      continue;
    }
    switch (state_) {
      case State::Idle:
        if (c == '+') {
          out.push_back({FrameEvent::Kind::Ack, {}});
        } else if (c == '-') {
          out.push_back({FrameEvent::Kind::Nack, {}});
        } else if (c == kInterrupt) {
          out.push_back({FrameEvent::Kind::Interrupt, {}});
        }
        break;
      case State::Payload:
        if (c == '#') {
          state_ = State::Checksum1;
          break;
        }
        sum_ = static_cast<std::uint8_t>(sum_ + static_cast<std::uint8_t>(c));
        if (overlong_) {
          break;
        }
        if (payload_.size() >= kMaxPacketSize) {
          overlong_ = true;
          payload_.clear();
          payload_.shrink_to_fit();
          break;
        }
        payload_.push_back(c);
        break;
      case State::Checksum1:
        check_hi_ = c;
        state_ = State::Checksum2;
        break;
      case State::Checksum2: {
        state_ = State::Idle;
        int hi = hex_digit_value(check_hi_);
        int lo = hex_digit_value(c);
        FrameEvent ev;
        if (overlong_) {
          ev.kind = FrameEvent::Kind::Overlong;
        } else if (hi < 0 || lo < 0 || (hi << 4 | lo) != sum_) {
          ev.kind = FrameEvent::Kind::BadChecksum;
        } else {
          ev.kind = FrameEvent::Kind::Packet;
          ev.payload = std::move(payload_);
        }
        payload_.clear();
        overlong_ = false;
        sum_ = 0;
        out.push_back(std::move(ev));
        break;
      }
    }
  }
}

std::uint8_t checksum(std::string_view payload) {
  std::uint8_t sum = 0;
  for (char c : payload) {
    sum = static_cast<std::uint8_t>(sum + static_cast<std::uint8_t>(c));
  }
  return sum;
}

std::string encode_packet(std::string_view payload, bool rle) {
  if (rle) {
    return frame('$', run_length_encode(payload));
  }
  return frame('$', payload);
}

std::string encode_notification(std::string_view payload) { return frame('%', payload); }

Result<std::string> run_length_decode(std::string_view payload) {
  std::string out;
  out.reserve(payload.size());
  for (std::size_t i = 0; i < payload.size(); ++i) {
    if (payload[i] != '*') {
      out.push_back(payload[i]);
      continue;
    }
    if (out.empty() || i + 1 >= payload.size() || static_cast<unsigned char>(payload[i + 1]) < kRleBias) {
      return base::make_error(base::Errc::malformed, "bad run-length encoding");
    }
    out.append(static_cast<std::size_t>(static_cast<unsigned char>(payload[i + 1]) - kRleBias), out.back());
    ++i;
  }
  return out;
}

std::string run_length_encode(std::string_view payload) {
  std::string out;
  out.reserve(payload.size());
  std::size_t copied = 0;  // payload[copied, i) is waiting to be copied verbatim
  std::size_t i = 0;
  const std::size_t n = payload.size();
  while (i + 3 < n) {
    char c = payload[i];
    // Cheap test first: most payloads (hex of real memory) have no runs of four.
    if (payload[i + 1] != c || payload[i + 2] != c || payload[i + 3] != c || rle_forbidden(c)) {
      ++i;
      continue;
    }
    std::size_t limit = std::min(n - i, kMaxRun);
    std::size_t run = 4;
    while (run < limit && payload[i + run] == c) {
      ++run;
    }
    // repeats = copies after the first; encoded as char(repeats + 29), which must not frame.
    std::size_t repeats = run - 1;
    while (repeats + kRleBias == '#' || repeats + kRleBias == '$') {
      --repeats;
    }
    out.append(payload.substr(copied, i + 1 - copied));
    out.push_back('*');
    out.push_back(static_cast<char>(repeats + kRleBias));
    i += repeats + 1;
    copied = i;
  }
  out.append(payload.substr(copied));
  return out;
}

std::string escape_binary(std::span<const std::uint8_t> bytes) {
  std::string out;
  out.reserve(bytes.size() + bytes.size() / 8);
  for (std::uint8_t b : bytes) {
    if (needs_escape(b)) {
      out.push_back(kEscape);
      out.push_back(static_cast<char>(b ^ 0x20));
    } else {
      out.push_back(static_cast<char>(b));
    }
  }
  return out;
}

std::string escape_binary(std::string_view bytes) {
  const auto* data = reinterpret_cast<const std::uint8_t*>(bytes.data());
  return escape_binary(std::span<const std::uint8_t>(data, bytes.size()));
}

Result<Bytes> unescape_binary(std::string_view escaped) {
  Bytes out;
  out.reserve(escaped.size());
  for (std::size_t i = 0; i < escaped.size(); ++i) {
    auto b = static_cast<std::uint8_t>(escaped[i]);
    if (b == kEscape) {
      if (i + 1 == escaped.size()) {
        return base::make_error(base::Errc::malformed, "trailing escape character in binary data");
      }
      ++i;
      b = static_cast<std::uint8_t>(static_cast<std::uint8_t>(escaped[i]) ^ 0x20);
    }
    out.push_back(b);
  }
  return out;
}

std::size_t escape_binary_prefix(std::span<const std::uint8_t> bytes, std::size_t max_out, std::string& out) {
  std::size_t used = 0;
  std::size_t consumed = 0;
  for (std::uint8_t b : bytes) {
    std::size_t width = needs_escape(b) ? 2 : 1;
    if (used + width > max_out) {
      break;
    }
    if (width == 2) {
      out.push_back(kEscape);
      out.push_back(static_cast<char>(b ^ 0x20));
    } else {
      out.push_back(static_cast<char>(b));
    }
    used += width;
    ++consumed;
  }
  return consumed;
}

}  // namespace protocol
