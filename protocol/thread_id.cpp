// Thread ids: "pPID.TID" (multiprocess) or "TID"; -1 means all, 0 means any.
#include "protocol/thread_id.hpp"

namespace protocol {

namespace {

// One id component: a hex number >= 0, or exactly -1.
Result<std::int64_t> parse_component(std::string_view text, const char* what) {
  if (text.empty()) {
    return base::make_error(base::Errc::malformed, std::string("missing ") + what + " in thread id");
  }
  auto value = parse_hex_i64(text);
  if (!value) {
    return base::make_error(base::Errc::malformed, std::string("bad ") + what + " in thread id");
  }
  if (*value < 0 && *value != ThreadId::kAll) {
    return base::make_error(base::Errc::malformed, std::string("negative ") + what + " in thread id");
  }
  return *value;
}

std::string format_component(std::int64_t value) {
  if (value < 0) {
    return "-" + hex_u64(static_cast<std::uint64_t>(0) - static_cast<std::uint64_t>(value));
  }
  return hex_u64(static_cast<std::uint64_t>(value));
}

}  // namespace

Result<ThreadId> parse_thread_id(std::string_view text) {
  ThreadId id;
  if (text.empty() || text.front() != 'p') {
    auto tid = parse_component(text, "thread");
    if (!tid) {
      return std::move(tid).error();
    }
    id.pid = ThreadId::kAny;
    id.tid = *tid;
    return id;
  }
  text.remove_prefix(1);
  std::size_t dot = text.find('.');
  auto pid = parse_component(text.substr(0, dot), "process");
  if (!pid) {
    return std::move(pid).error();
  }
  id.pid = *pid;
  if (dot == std::string_view::npos) {
    id.tid = ThreadId::kAll;
    return id;
  }
  auto tid = parse_component(text.substr(dot + 1), "thread");
  if (!tid) {
    return std::move(tid).error();
  }
  id.tid = *tid;
  if (id.pid == ThreadId::kAll && id.tid > 0) {
    return base::make_error(base::Errc::malformed, "thread of all processes in thread id");
  }
  return id;
}

std::string format_thread_id(const ThreadId& id, bool multiprocess) {
  if (!multiprocess) {
    return format_component(id.tid);
  }
  return "p" + format_component(id.pid) + "." + format_component(id.tid);
}

}  // namespace protocol
