// Hex helpers shared by every packet parser and encoder.
#include "protocol/hex.hpp"

#include <limits>

namespace protocol {

namespace {

constexpr char kDigits[] = "0123456789abcdef";

}  // namespace

int hex_digit_value(char c) {
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

namespace {

void append_hex_byte(std::string& out, std::uint8_t b) {
  out.push_back(kDigits[b >> 4]);
  out.push_back(kDigits[b & 0xf]);
}

}  // namespace

std::string to_hex(std::span<const std::uint8_t> bytes) {
  // Hot path of every `m` reply: write into a presized buffer, no per-byte growth checks.
  std::string out(bytes.size() * 2, '\0');
  char* p = out.data();
  for (std::uint8_t b : bytes) {
    *p++ = kDigits[b >> 4];
    *p++ = kDigits[b & 0xf];
  }
  return out;
}

std::string to_hex(std::string_view text) {
  std::string out;
  out.reserve(text.size() * 2);
  for (char c : text) {
    append_hex_byte(out, static_cast<std::uint8_t>(c));
  }
  return out;
}

Result<Bytes> from_hex(std::string_view hex) {
  if (hex.size() % 2 != 0) {
    return base::make_error(base::Errc::malformed, "odd number of hex digits");
  }
  Bytes out;
  out.reserve(hex.size() / 2);
  for (std::size_t i = 0; i < hex.size(); i += 2) {
    int hi = hex_digit_value(hex[i]);
    int lo = hex_digit_value(hex[i + 1]);
    if (hi < 0 || lo < 0) {
      return base::make_error(base::Errc::malformed, "bad hex digit");
    }
    out.push_back(static_cast<std::uint8_t>(hi << 4 | lo));
  }
  return out;
}

Result<std::string> from_hex_string(std::string_view hex) {
  auto bytes = from_hex(hex);
  if (!bytes) {
    return std::move(bytes).error();
  }
  return std::string(bytes->begin(), bytes->end());
}

Result<std::uint64_t> parse_hex_u64(std::string_view hex) {
  if (hex.empty()) {
    return base::make_error(base::Errc::malformed, "missing hex number");
  }
  if (hex.size() > 16) {
    return base::make_error(base::Errc::malformed, "hex number too long");
  }
  std::uint64_t value = 0;
  for (char c : hex) {
    int d = hex_digit_value(c);
    if (d < 0) {
      return base::make_error(base::Errc::malformed, "bad hex digit");
    }
    value = value << 4 | static_cast<std::uint64_t>(d);
  }
  return value;
}

Result<std::int64_t> parse_hex_i64(std::string_view hex) {
  bool negative = !hex.empty() && hex.front() == '-';
  if (negative) {
    hex.remove_prefix(1);
  }
  auto magnitude = parse_hex_u64(hex);
  if (!magnitude) {
    return std::move(magnitude).error();
  }
  constexpr auto kMax = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
  if (*magnitude > kMax) {
    return base::make_error(base::Errc::malformed, "hex number out of range");
  }
  auto value = static_cast<std::int64_t>(*magnitude);
  return negative ? -value : value;
}

std::string hex_u64(std::uint64_t value) {
  if (value == 0) {
    return "0";
  }
  std::string out;
  while (value != 0) {
    out.insert(out.begin(), kDigits[value & 0xf]);
    value >>= 4;
  }
  return out;
}

std::string hex_fixed(std::uint64_t value, int digits) {
  std::string out(static_cast<std::size_t>(digits > 0 ? digits : 0), '0');
  for (auto it = out.rbegin(); it != out.rend(); ++it) {
    *it = kDigits[value & 0xf];
    value >>= 4;
  }
  return out;
}

}  // namespace protocol
