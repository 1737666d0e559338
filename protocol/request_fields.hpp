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

}  // namespace protocol::fields
