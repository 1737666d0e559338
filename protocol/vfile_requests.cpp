// Pure parsers for the vFile packets (host file I/O). Strict, as requests.cpp.
#include <limits>

#include "protocol/framing.hpp"
#include "protocol/request_fields.hpp"
#include "protocol/requests.hpp"

namespace protocol {
namespace {

using fields::hex_field;
using fields::hex_field_max;
using fields::malformed;
using fields::split_three;

constexpr std::uint64_t kMaxFileFlags = 0xffff;
constexpr std::uint64_t kMaxFileMode = 0xffff;

// A file descriptor of vFile (a non-negative int).
Result<std::uint64_t> fd_field(std::string_view text) {
  return hex_field_max(text, "fd", std::numeric_limits<int>::max());
}

Result<std::string> hex_path(std::string_view text) {
  auto path = from_hex_string(text);
  if (!path) {
    return malformed(path.error().detail + " in path");
  }
  if (path->find('\0') != std::string::npos) {
    return malformed("NUL byte in path");
  }
  return path;
}

}  // namespace

Result<VFileOpen> parse_vfile_open(std::string_view body) {
  auto fields = split_three(body, "path", "flags");
  if (!fields) {
    return std::move(fields).error();
  }
  const auto& [first, second, third] = *fields;
  auto path = hex_path(first);
  if (!path) {
    return std::move(path).error();
  }
  auto flags = hex_field_max(second, "flags", kMaxFileFlags);
  if (!flags) {
    return std::move(flags).error();
  }
  auto mode = hex_field_max(third, "mode", kMaxFileMode);
  if (!mode) {
    return std::move(mode).error();
  }
  return VFileOpen{std::move(*path), static_cast<int>(*flags), static_cast<int>(*mode)};
}

Result<VFilePread> parse_vfile_pread(std::string_view body) {
  auto fields = split_three(body, "fd", "count");
  if (!fields) {
    return std::move(fields).error();
  }
  const auto& [first, second, third] = *fields;
  auto fd = fd_field(first);
  if (!fd) {
    return std::move(fd).error();
  }
  auto count = hex_field(second, "count");
  if (!count) {
    return std::move(count).error();
  }
  auto offset = hex_field(third, "offset");
  if (!offset) {
    return std::move(offset).error();
  }
  return VFilePread{static_cast<int>(*fd), *count, *offset};
}

Result<VFilePwrite> parse_vfile_pwrite(std::string_view body) {
  auto fields = split_three(body, "fd", "offset");
  if (!fields) {
    return std::move(fields).error();
  }
  const auto& [first, second, third] = *fields;
  auto fd = fd_field(first);
  if (!fd) {
    return std::move(fd).error();
  }
  auto offset = hex_field(second, "offset");
  if (!offset) {
    return std::move(offset).error();
  }
  auto data = unescape_binary(third);
  if (!data) {
    return std::move(data).error();
  }
  return VFilePwrite{static_cast<int>(*fd), *offset, std::move(*data)};
}

Result<std::int64_t> parse_vfile_number(std::string_view body) {
  auto value = parse_hex_i64(body);
  if (!value) {
    return malformed(value.error().detail + " in number");
  }
  return value;
}

Result<std::string> parse_vfile_path(std::string_view body) { return hex_path(body); }

}  // namespace protocol
