// m M X: inferior memory (while GDB looks at a trace frame, that frame's: trace_frames.cpp).
// Reads may come back short; GDB asks again for the rest.
#include <algorithm>

#include "protocol/framing.hpp"
#include "protocol/hex.hpp"
#include "server/handlers/handlers.hpp"

namespace server {
namespace {

// The program's memory, or the trace frame's GDB looks at.
base::Result<tracer::Bytes> read_memory(Context& cx, std::uint64_t addr, std::size_t len) {
  if (const auto* frame = selected_trace_frame(cx)) {
    return frame_memory(cx, *frame, addr, len);
  }
  return cx.target.read_memory(addr, len);
}

}  // namespace

HandlerResult on_read_memory(Context& cx, const protocol::ReadMem& req) {
  if (auto ok = require_process(cx); !ok) {
    return ok.error();
  }
  // Two hex digits a byte must fit in one reply; GDB copes with a short read.
  std::size_t len = std::min<std::uint64_t>(req.len, protocol::kMaxPacketSize / 2);
  if (len == 0) {
    return Reply::packet("");
  }
  auto bytes = read_memory(cx, req.addr, len);
  if (!bytes) {
    return bytes.error();
  }
  return Reply::packet(protocol::to_hex(*bytes));
}

HandlerResult on_read_memory_binary(Context& cx, const protocol::ReadMem& req) {
  if (auto ok = require_process(cx); !ok) {
    return ok.error();
  }
  // 'b' and the escaped bytes in one reply: what does not fit is left for GDB's next read.
  constexpr std::size_t kRoom = protocol::kMaxPacketSize - 1;
  std::string reply = "b";
  const std::size_t len = std::min<std::uint64_t>(req.len, kRoom);
  if (len == 0) {
    return Reply::packet(reply);  // as gdbserver (LLDB's probe x0,0 so learns this is not its `x`)
  }
  auto bytes = read_memory(cx, req.addr, len);
  if (!bytes) {
    return bytes.error();
  }
  protocol::escape_binary_prefix(*bytes, kRoom, reply);
  return Reply::packet(reply);
}

HandlerResult on_write_memory(Context& cx, const protocol::WriteMem& req) {
  if (auto ok = require_process(cx); !ok) {
    return ok.error();
  }
  if (req.data.empty()) {
    return Reply::ok();  // GDB probes X support with a zero-length write
  }
  if (selected_trace_frame(cx) != nullptr) {
    return base::make_error(base::Errc::invalid, "a trace frame's memory cannot be written");
  }
  if (auto ok = cx.target.write_memory(req.addr, req.data); !ok) {
    return ok.error();
  }
  return Reply::ok();
}

}  // namespace server
