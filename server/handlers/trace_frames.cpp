// Looking at trace frames (tfind): QTFrame selects one, and while one is selected, `g`, `p`,
// `m` and `x` answer from it, as gdbserver does: registers it did not collect are
// unavailable (`xx`, which GDB shows as <unavailable>), its pc at least is the tracepoint's;
// memory it did not collect is an error unless GDB said it never changes (QTro), then it comes
// from the program. qXfer:traceframe-info says what a frame holds, qTBuffer gives the raw
// frames for `tsave`.
#include <fmt/format.h>

#include "protocol/framing.hpp"
#include "protocol/tracepoint_replies.hpp"
#include "server/handlers/handlers.hpp"
#include "tracer/trace/experiment.hpp"

namespace server {
namespace {

using tracer::trace::Frame;

base::Error no_frame() { return base::make_error(base::Errc::invalid, "no such trace frame"); }

// The registers frame holds, in the `g` layout; where it has none, every byte unavailable
// but the pc's, set to its tracepoint's address. Each entry: a byte, or nullopt.
base::Result<std::vector<std::optional<std::uint8_t>>> frame_register_bytes(Context& cx, const Frame& frame) {
  std::vector<std::optional<std::uint8_t>> out;
  if (frame.registers) {
    out.assign(frame.registers->begin(), frame.registers->end());
    return out;
  }
  auto tid = current_thread(cx);
  if (!tid) {
    return tid.error();
  }
  const auto roles = cx.target.register_roles(*tid);
  auto place = cx.target.register_place(*tid, roles.pc);
  if (!place) {
    return place.error();
  }
  out.assign(place->block_size, std::nullopt);
  const tracer::Bytes pc = arch::x86::address_bytes(roles, frame.pc);
  for (std::size_t i = 0; i < pc.size() && place->offset + i < out.size(); ++i) {
    out[place->offset + i] = pc[i];
  }
  return out;
}

std::string hex_or_unavailable(const std::vector<std::optional<std::uint8_t>>& bytes, std::size_t from,
                               std::size_t len) {
  std::string out;
  for (std::size_t i = from; i < from + len && i < bytes.size(); ++i) {
    out += bytes[i] ? fmt::format("{:02x}", *bytes[i]) : "xx";
  }
  return out;
}

bool read_only(const Context& cx, std::uint64_t addr, std::uint64_t len) {
  for (const auto& [start, end] : cx.server.trace_readonly) {
    if (start <= addr && addr + len - 1 <= end) {
      return true;
    }
  }
  return false;
}

}  // namespace

const Frame* selected_trace_frame(Context& cx) {
  if (!cx.state.trace_frame) {
    return nullptr;
  }
  tracer::trace::Experiment* e = cx.target.experiment();
  return e != nullptr ? e->buffer().find(*cx.state.trace_frame) : nullptr;
}

HandlerResult frame_registers_reply(Context& cx, const Frame& frame) {
  auto bytes = frame_register_bytes(cx, frame);
  if (!bytes) {
    return bytes.error();
  }
  return Reply::packet(hex_or_unavailable(*bytes, 0, bytes->size()));
}

HandlerResult frame_register_reply(Context& cx, const Frame& frame, int regno) {
  auto tid = current_thread(cx);
  if (!tid) {
    return tid.error();
  }
  auto place = cx.target.register_place(*tid, regno);
  if (!place) {
    return place.error();
  }
  auto bytes = frame_register_bytes(cx, frame);
  if (!bytes) {
    return bytes.error();
  }
  if (place->offset + place->size > bytes->size()) {
    return Reply::packet(std::string(2 * place->size, 'x'));
  }
  return Reply::packet(hex_or_unavailable(*bytes, place->offset, place->size));
}

base::Result<tracer::Bytes> frame_memory(Context& cx, const Frame& frame, std::uint64_t addr, std::size_t len) {
  tracer::Bytes bytes = frame.read(addr, len);
  if (!bytes.empty()) {
    return bytes;
  }
  if (len > 0 && read_only(cx, addr, len)) {
    return cx.target.read_memory(addr, len);
  }
  return base::make_error(base::Errc::invalid, fmt::format("trace frame holds no memory at {:#x}", addr));
}

base::Result<std::string> build_traceframe_info(Context& cx, const std::string& annex) {
  const Frame* frame = selected_trace_frame(cx);
  if (frame == nullptr || !annex.empty()) {
    return no_frame();
  }
  std::vector<std::pair<std::uint64_t, std::uint64_t>> memory;
  for (const auto& m : frame->memory) {
    memory.emplace_back(m.address, m.bytes.size());
  }
  std::vector<std::uint32_t> variables;
  for (const auto& [n, value] : frame->variables) {
    variables.push_back(n);
  }
  return protocol::encode_traceframe_info(memory, variables);
}

HandlerResult on_trace_frame(Context& cx, const protocol::FrameSelection& req) {
  tracer::trace::Experiment* e = cx.target.experiment();
  if (e == nullptr) {
    return base::make_error(base::Errc::unsupported, "tracepoints are not run by this target");
  }
  using K = protocol::FrameSelection::Kind;
  using Q = tracer::trace::FrameQuery::Kind;
  if (req.kind == K::Number && req.number < 0) {
    cx.state.trace_frame.reset();
    cx.state.xfer_cache.erase("traceframe-info:");
    return Reply::ok();
  }
  tracer::trace::FrameQuery q;
  q.kind = req.kind == K::Number       ? Q::Number
           : req.kind == K::Pc         ? Q::Pc
           : req.kind == K::Tracepoint ? Q::Tracepoint
           : req.kind == K::InRange    ? Q::InRange
                                       : Q::OutsideRange;
  q.number = static_cast<std::uint64_t>(req.number);
  q.start = req.start;
  q.end = req.end;
  auto found = e->buffer().next(q, cx.state.trace_frame);
  if (!found) {
    return Reply::packet(protocol::encode_frame_found(std::nullopt));
  }
  cx.state.trace_frame = *found;
  cx.state.xfer_cache.erase("traceframe-info:");
  return Reply::packet(protocol::encode_frame_found(std::pair{*found, e->buffer().find(*found)->tracepoint}));
}

HandlerResult on_trace_buffer_read(Context& cx, const protocol::ReadMem& req) {
  tracer::trace::Experiment* e = cx.target.experiment();
  if (e == nullptr) {
    return base::make_error(base::Errc::unsupported, "tracepoints are not run by this target");
  }
  // tsave reads it a few bytes at a time: serialized once per state of the buffer.
  const std::string key = fmt::format("qTBuffer {} {} {}", e->running(), e->buffer().created(), e->buffer().count());
  auto cached = cx.state.xfer_cache.find(key);
  if (cached == cx.state.xfer_cache.end()) {
    const tracer::Bytes bytes = e->buffer().serialize();
    cached = cx.state.xfer_cache.insert_or_assign(key, std::string(bytes.begin(), bytes.end())).first;
  }
  const std::string& all = cached->second;
  if (req.addr == all.size()) {
    return Reply::packet("l");
  }
  if (req.addr > all.size()) {
    return base::make_error(base::Errc::invalid, "past the end of the trace buffer");
  }
  const std::size_t len = std::min<std::uint64_t>({req.len, all.size() - req.addr, (protocol::kMaxPacketSize - 16) / 2});
  return Reply::packet(protocol::to_hex(std::string_view(all).substr(req.addr, len)));
}

}  // namespace server
