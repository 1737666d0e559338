// g G p P: registers of the selected (Hg) thread, in the layout of the target description; while
// GDB looks at a trace frame, that frame's (trace_frames.cpp).
#include "protocol/hex.hpp"
#include "server/handlers/handlers.hpp"

namespace server {

HandlerResult on_read_registers(Context& cx, std::string_view /*body*/) {
  if (const auto* frame = selected_trace_frame(cx)) {
    return frame_registers_reply(cx, *frame);
  }
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
  if (selected_trace_frame(cx) != nullptr) {
    return base::make_error(base::Errc::invalid, "a trace frame's registers cannot be written");
  }
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
  if (const auto* frame = selected_trace_frame(cx)) {
    return frame_register_reply(cx, *frame, regno);
  }
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
  if (selected_trace_frame(cx) != nullptr) {
    return base::make_error(base::Errc::invalid, "a trace frame's registers cannot be written");
  }
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
