// encode_error: the only writer of "Enn" and "E.text" replies.
#include "protocol/errors.hpp"

#include "protocol/hex.hpp"

namespace protocol {

namespace {

// Keeps the text safe inside a packet: framing and escape characters become '?' and
// control characters become ' ', so GDB shows something readable.
std::string sanitize(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (c == '#' || c == '$' || c == '}' || c == '*') {
      out.push_back('?');
    } else if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      out.push_back(' ');
    } else {
      out.push_back(c);
    }
  }
  return out;
}

}  // namespace

std::string encode_error(const base::Error& error, ErrStyle style) {
  if (style == ErrStyle::Text) {
    std::string text = sanitize(error.message());
    if (text.empty()) {
      text = "error";
    }
    return "E." + text;
  }
  int code = 1;
  if (error.code == base::Errc::system && error.sys_errno != 0) {
    code = error.sys_errno < 1 ? 1 : (error.sys_errno > 0xff ? 0xff : error.sys_errno);
  }
  return "E" + hex_fixed(static_cast<std::uint64_t>(code), 2);
}

}  // namespace protocol
