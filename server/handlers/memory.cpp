// m M X: inferior memory. Reads may come back short; GDB asks again for the rest.
#include <algorithm>

#include "protocol/framing.hpp"
#include "protocol/hex.hpp"
#include "server/handlers/handlers.hpp"

namespace server {

HandlerResult on_read_memory(Context& cx, const protocol::ReadMem& req) {
  if (auto ok = require_process(cx); !ok) {
    return ok.error();
  }
  // Two hex digits a byte must fit in one reply; GDB copes with a short read.
  std::size_t len = std::min<std::uint64_t>(req.len, protocol::kMaxPacketSize / 2);
  if (len == 0) {
    return Reply::packet("");
  }
  auto bytes = cx.target.read_memory(req.addr, len);
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
  auto bytes = cx.target.read_memory(req.addr, len);
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
  if (auto ok = cx.target.write_memory(req.addr, req.data); !ok) {
    return ok.error();
  }
  return Reply::ok();
}

}  // namespace server
