#include "protocol/tracepoint_replies.hpp"

#include <fmt/format.h>

namespace protocol {

std::string encode_trace_status(const TraceStatusReply& s) {
  std::string reason = s.stop_reason;
  if (reason == "tstop" || reason == "terror") {
    reason += ":" + to_hex(s.stop_text);
  }
  return fmt::format(
      "T{};{}:{:x};tframes:{:x};tcreated:{:x};tfree:{:x};tsize:{:x};circular:{};disconn:{};"
      "starttime:{:x};stoptime:{:x};username:{};notes:{}:",
      s.running ? 1 : 0, reason, s.stopping_tracepoint, s.frames, s.created, s.buffer_free, s.buffer_size,
      s.circular ? 1 : 0, s.disconnected_tracing ? 1 : 0, s.start_time, s.stop_time, to_hex(s.user),
      to_hex(s.notes));
}

std::vector<std::string> encode_tracepoint_definition(const TracepointDefinitionReply& tp) {
  std::vector<std::string> out;
  std::string head = fmt::format("T{:x}:{:x}:{}:{:x}:{:x}", tp.number, tp.address, tp.enabled ? 'E' : 'D',
                                 tp.step_count, tp.pass_count);
  if (tp.fast_length) {
    head += fmt::format(":F{:x}", *tp.fast_length);
  }
  if (tp.condition) {
    head += fmt::format(":X{:x},{}", tp.condition->size(), to_hex(*tp.condition));
  }
  out.push_back(std::move(head));
  for (const std::string& a : tp.actions) {
    out.push_back(fmt::format("A{:x}:{:x}:{}", tp.number, tp.address, a));
  }
  for (const std::string& a : tp.step_actions) {
    out.push_back(fmt::format("S{:x}:{:x}:{}", tp.number, tp.address, a));
  }
  for (const auto& [type, text] : tp.sources) {
    out.push_back(fmt::format("Z{:x}:{:x}:{}:0:{:x}:{}", tp.number, tp.address, type, text.size(), to_hex(text)));
  }
  return out;
}

std::string encode_trace_variable(std::uint32_t number, std::int64_t initial_value, bool builtin,
                                  const std::string& name) {
  return fmt::format("{:x}:{:x}:{:x}:{}", number, static_cast<std::uint64_t>(initial_value), builtin ? 1 : 0,
                     to_hex(name));
}

std::string encode_frame_found(std::optional<std::pair<std::uint64_t, std::uint32_t>> frame) {
  return frame ? fmt::format("F{:x}T{:x}", frame->first, frame->second) : "F-1";
}

std::string encode_traceframe_info(const std::vector<std::pair<std::uint64_t, std::uint64_t>>& memory,
                                   const std::vector<std::uint32_t>& variables) {
  std::string out = "<traceframe-info>\n";
  for (const auto& [start, length] : memory) {
    out += fmt::format("<memory start=\"0x{:x}\" length=\"0x{:x}\"/>\n", start, length);
  }
  for (std::uint32_t v : variables) {
    out += fmt::format("<tvar id=\"{}\"/>\n", v);
  }
  return out + "</traceframe-info>\n";
}

}  // namespace protocol
