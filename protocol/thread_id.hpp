// Thread ids on the wire: "pPID.TID" with multiprocess, else "TID"; -1 = all, 0 = any.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "protocol/hex.hpp"

namespace protocol {

struct ThreadId {
  static constexpr std::int64_t kAll = -1;
  static constexpr std::int64_t kAny = 0;
  std::int64_t pid = kAny;  // kAny when the id had no "p" part
  std::int64_t tid = kAny;  // kAll when "pPID" or "pPID.-1"
  bool operator==(const ThreadId&) const = default;
};

// "p1a.1b", "p1a", "p1a.-1", "1b", "-1", "0".
Result<ThreadId> parse_thread_id(std::string_view text);
// "p1a.1b" when multiprocess, else "1b" (-1 as "-1").
std::string format_thread_id(const ThreadId& id, bool multiprocess);

}  // namespace protocol
