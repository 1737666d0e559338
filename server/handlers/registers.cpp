// g G p P: registers of the selected (Hg) thread, in the layout of the target description.
#include "protocol/hex.hpp"
#include "server/handlers/handlers.hpp"

namespace server {

HandlerResult on_read_registers(Context& cx, std::string_view /*body*/) {
  auto tid = current_thread(cx);
  if (!tid) {
    return tid.error();
  }
  auto regs = cx.target.read_registers(*tid);
  if (!regs) {
    return regs.error();
  }
  return Reply::packet(protocol::to_hex(*regs));
}

HandlerResult on_write_registers(Context& cx, std::string_view body) {
  auto bytes = protocol::from_hex(body);
  if (!bytes) {
    return bytes.error();
  }
  auto tid = current_thread(cx);
  if (!tid) {
    return tid.error();
  }
  if (auto ok = cx.target.write_registers(*tid, *bytes); !ok) {
    return ok.error();
  }
  return Reply::ok();
}

HandlerResult on_read_register(Context& cx, const int& regno) {
  auto tid = current_thread(cx);
  if (!tid) {
    return tid.error();
  }
  auto value = cx.target.read_register(*tid, regno);
  if (!value) {
    return value.error();
  }
  return Reply::packet(protocol::to_hex(*value));
}

HandlerResult on_write_register(Context& cx, const protocol::WriteReg& req) {
  auto tid = current_thread(cx);
  if (!tid) {
    return tid.error();
  }
  if (auto ok = cx.target.write_register(*tid, req.regno, req.value); !ok) {
    return ok.error();
  }
  return Reply::ok();
}

}  // namespace server
