// The fields request parsers share (requests.cpp, vfile_requests.cpp): splitting, hex numbers
// that name themselves in errors. Internal to protocol/.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "protocol/hex.hpp"

namespace protocol::fields {

inline base::Error malformed(std::string detail) { return base::make_error(base::Errc::malformed, std::move(detail)); }

// Splits text at the first sep; nullopt when sep is absent.
inline std::optional<std::pair<std::string_view, std::string_view>> split_once(std::string_view text, char sep) {
  std::size_t pos = text.find(sep);
  if (pos == std::string_view::npos) {
    return std::nullopt;
  }
  return std::pair{text.substr(0, pos), text.substr(pos + 1)};
}

// Three comma-separated fields "a,b,c" (c may contain commas); the errors name the fields.
inline Result<std::array<std::string_view, 3>> split_three(std::string_view text, const char* first_name,
                                                    const char* second_name) {
  auto first = split_once(text, ',');
  if (!first) {
    return malformed(std::string("missing ',' after ") + first_name);
  }
  auto second = split_once(first->second, ',');
  if (!second) {
    return malformed(std::string("missing ',' after ") + second_name);
  }
  return std::array<std::string_view, 3>{first->first, second->first, second->second};
}

// A hex field; the error names the field ("bad hex digit in address").
inline Result<std::uint64_t> hex_field(std::string_view text, const char* what) {
  auto value = parse_hex_u64(text);
  if (!value) {
    return malformed(value.error().detail + " in " + what);
  }
  return *value;
}

// A hex field no larger than max.
inline Result<std::uint64_t> hex_field_max(std::string_view text, const char* what, std::uint64_t max) {
  auto value = hex_field(text, what);
  if (value && *value > max) {
    return malformed(std::string(what) + " out of range");
  }
  return value;
}

// An agent expression's bytecode is at most this long (gdbserver's limit is the packet's).
inline constexpr std::uint64_t kMaxExpressionBytes = 0x1000;

// "XLEN,HEX" at the start of rest: one agent expression, taken off rest (what follows it is
// the next field: its length says where it ends). what names it in errors.
inline Result<Bytes> take_expression(std::string_view& rest, const std::string& what) {
  if (rest.empty() || rest.front() != 'X') {
    return malformed(what + " must start with X, not '" + std::string(rest.substr(0, 16)) + "'");
  }
  rest.remove_prefix(1);
  const std::size_t comma = rest.find(',');
  if (comma == std::string_view::npos) {
    return malformed(what + " needs LEN,BYTECODE");
  }
  auto len = hex_field_max(rest.substr(0, comma), (what + " length").c_str(), kMaxExpressionBytes);
  if (!len) {
    return std::move(len).error();
  }
  rest.remove_prefix(comma + 1);
  if (rest.size() < 2 * *len) {
    return malformed(what + " shorter than its length " + std::to_string(*len));
  }
  auto code = from_hex(rest.substr(0, 2 * *len));
  if (!code) {
    return std::move(code).error();
  }
  rest.remove_prefix(2 * *len);
  return code;
}

}  // namespace protocol::fields
