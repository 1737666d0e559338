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

namespace {

// "FD,NUMBER,REST" of pread and pwrite: the descriptor, a hex number named `second`, the rest.
struct FdNumberRest {
  int fd = 0;
  std::uint64_t number = 0;
  std::string_view rest;
};
Result<FdNumberRest> parse_fd_number_rest(std::string_view body, const char* second) {
  auto parts = split_three(body, "fd", second);
  if (!parts) {
    return std::move(parts).error();
  }
  auto fd = fd_field((*parts)[0]);
  if (!fd) {
    return std::move(fd).error();
  }
  auto number = hex_field((*parts)[1], second);
  if (!number) {
    return std::move(number).error();
  }
  return FdNumberRest{static_cast<int>(*fd), *number, (*parts)[2]};
}

}  // namespace

Result<VFilePread> parse_vfile_pread(std::string_view body) {
  auto head = parse_fd_number_rest(body, "count");
  if (!head) {
    return std::move(head).error();
  }
  auto offset = hex_field(head->rest, "offset");
  if (!offset) {
    return std::move(offset).error();
  }
  return VFilePread{head->fd, head->number, *offset};
}

Result<VFilePwrite> parse_vfile_pwrite(std::string_view body) {
  auto head = parse_fd_number_rest(body, "offset");
  if (!head) {
    return std::move(head).error();
  }
  auto data = unescape_binary(head->rest);
  if (!data) {
    return std::move(data).error();
  }
  return VFilePwrite{head->fd, head->number, std::move(*data)};
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
