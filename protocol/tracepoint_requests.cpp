#include "protocol/tracepoint_requests.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "protocol/request_fields.hpp"

namespace protocol {

using fields::hex_field;
using fields::hex_field_max;
using fields::malformed;

namespace {

constexpr std::uint64_t kMaxNumber = 0xffffffff;

// Fields separated by ':', the last one the rest of the text (it may hold colons itself).
std::vector<std::string_view> split_fields(std::string_view text, std::size_t count) {
  std::vector<std::string_view> out;
  while (out.size() + 1 < count) {
    const std::size_t colon = text.find(':');
    if (colon == std::string_view::npos) {
      break;
    }
    out.push_back(text.substr(0, colon));
    text.remove_prefix(colon + 1);
  }
  out.push_back(text);
  return out;
}

Result<std::uint32_t> number_field(std::string_view text, const char* what) {
  auto n = hex_field_max(text, what, kMaxNumber);
  if (!n) {
    return std::move(n).error();
  }
  return static_cast<std::uint32_t>(*n);
}

// A tracepoint's N:ADDR, the two fields that name it in every packet about it.
Result<TracepointLocation> location_fields(std::string_view number, std::string_view address) {
  auto n = number_field(number, "tracepoint number");
  auto a = hex_field(address, "tracepoint address");
  if (!n || !a) {
    return !n ? std::move(n).error() : std::move(a).error();
  }
  return TracepointLocation{*n, *a};
}

// "R MASK", "M BASEREG,OFFSET,LEN" or "X LEN,BYTECODE" at the start of rest, taken off it.
Result<TraceAction> take_action(std::string_view& rest) {
  TraceAction a;
  const char kind = rest.front();
  if (kind == 'X') {
    auto code = fields::take_expression(rest, "collected expression");
    if (!code) {
      return std::move(code).error();
    }
    a.kind = TraceAction::Kind::Expression;
    a.bytecode = std::move(*code);
    return a;
  }
  rest.remove_prefix(1);
  // The hex digits (and a leading '-') at the start of rest, taken off it.
  auto digits = [&]() {
    std::size_t n = 0;
    while (n < rest.size() && (std::isxdigit(static_cast<unsigned char>(rest[n])) != 0 || (n == 0 && rest[n] == '-'))) {
      ++n;
    }
    const std::string_view field = rest.substr(0, n);
    rest.remove_prefix(n);
    return field;
  };
  if (kind == 'R') {
    a.kind = TraceAction::Kind::Registers;
    a.register_mask = std::string(digits());
    if (a.register_mask.empty() || a.register_mask.front() == '-') {
      return malformed("register collection without its mask");
    }
    return a;
  }
  if (kind != 'M') {
    return malformed(std::string("unknown tracepoint action '") + kind + "'");
  }
  a.kind = TraceAction::Kind::Memory;
  std::string_view base = digits();
  const bool negative = base.starts_with('-');
  if (negative) {
    base.remove_prefix(1);
  }
  auto reg = hex_field_max(base, "base register", 0x7fffffff);
  if (!reg || !rest.starts_with(',')) {
    return reg ? malformed("missing ',' after base register") : std::move(reg).error();
  }
  rest.remove_prefix(1);
  a.base_register = negative ? -static_cast<std::int64_t>(*reg) : static_cast<std::int64_t>(*reg);
  auto offset = hex_field(digits(), "memory offset");
  if (!offset || !rest.starts_with(',')) {
    return offset ? malformed("missing ',' after memory offset") : std::move(offset).error();
  }
  rest.remove_prefix(1);
  auto length = hex_field_max(digits(), "memory length", 0xffffffff);
  if (!length) {
    return std::move(length).error();
  }
  a.offset = *offset;
  a.length = *length;
  return a;
}

Result<TracepointPacket> parse_actions(std::string_view body) {
  auto f = split_fields(body, 3);
  if (f.size() != 3) {
    return malformed("QTDP actions need N:ADDR:ACTIONS");
  }
  TracepointActions out;
  auto at = location_fields(f[0], f[1]);
  if (!at) {
    return std::move(at).error();
  }
  out.number = at->number;
  out.address = at->address;
  std::string_view rest = f[2];
  if (rest.starts_with('S')) {
    out.while_stepping = true;
    rest.remove_prefix(1);
  }
  if (rest.ends_with('-')) {
    out.more = true;
    rest.remove_suffix(1);
  }
  while (!rest.empty()) {
    auto action = take_action(rest);
    if (!action) {
      return std::move(action).error();
    }
    out.actions.push_back(std::move(*action));
  }
  return TracepointPacket{std::move(out)};
}

}  // namespace

Result<TracepointPacket> parse_qtdp(std::string_view body) {
  if (body.starts_with('-')) {
    return parse_actions(body.substr(1));
  }
  auto f = split_fields(body, 5);
  if (f.size() != 5) {
    return malformed("QTDP needs N:ADDR:E|D:STEP:PASS");
  }
  TracepointCreate out;
  auto at = location_fields(f[0], f[1]);
  if (!at) {
    return std::move(at).error();
  }
  out.number = at->number;
  out.address = at->address;
  if (f[2] != "E" && f[2] != "D") {
    return malformed("tracepoint neither enabled (E) nor disabled (D)");
  }
  out.enabled = f[2] == "E";
  auto step = hex_field(f[3], "step count");
  if (!step) {
    return std::move(step).error();
  }
  out.step_count = *step;
  // The pass count, then optional fields, each after a ':'; a final '-' says actions follow.
  std::string_view rest = f[4];
  const std::size_t pass_end = std::min(rest.find(':'), rest.find('-'));
  auto pass = hex_field(rest.substr(0, pass_end), "pass count");
  if (!pass) {
    return std::move(pass).error();
  }
  out.pass_count = *pass;
  rest.remove_prefix(std::min(pass_end, rest.size()));
  while (rest.starts_with(':')) {
    rest.remove_prefix(1);
    if (rest.starts_with('F')) {
      rest.remove_prefix(1);
      const std::size_t end = std::min(rest.find(':'), rest.find('-'));
      auto length = hex_field_max(rest.substr(0, end), "fast tracepoint length", 0xff);
      if (!length) {
        return std::move(length).error();
      }
      out.fast_length = static_cast<std::uint32_t>(*length);
      rest.remove_prefix(std::min(end, rest.size()));
    } else if (rest.starts_with('S')) {
      out.static_marker = true;
      rest.remove_prefix(1);
    } else if (rest.starts_with('X')) {
      auto condition = fields::take_expression(rest, "tracepoint condition");
      if (!condition) {
        return std::move(condition).error();
      }
      out.condition = std::move(*condition);
    } else {
      return malformed("unknown tracepoint field '" + std::string(rest.substr(0, 8)) + "'");
    }
  }
  if (rest == "-") {
    out.more = true;
  } else if (!rest.empty()) {
    return malformed("unexpected '" + std::string(rest.substr(0, 8)) + "' after the tracepoint");
  }
  return TracepointPacket{out};
}

Result<TracepointSource> parse_qtdpsrc(std::string_view body) {
  auto f = split_fields(body, 6);
  if (f.size() != 6) {
    return malformed("QTDPsrc needs N:ADDR:TYPE:START:SLEN:HEX");
  }
  TracepointSource out;
  auto at = location_fields(f[0], f[1]);
  auto start = hex_field(f[3], "source start");
  if (!at || !start) {
    return !at ? std::move(at).error() : std::move(start).error();
  }
  auto total = hex_field(f[4], "source length");
  auto text = from_hex_string(f[5]);
  if (!total || !text) {
    return !total ? std::move(total).error() : malformed(text.error().detail + " in source text");
  }
  if (f[2].empty()) {
    return malformed("source without its type");
  }
  out.number = at->number;
  out.address = at->address;
  out.type = std::string(f[2]);
  out.start = *start;
  out.total_length = *total;
  out.text = std::move(*text);
  return out;
}

Result<TraceVariableDefinition> parse_qtdv(std::string_view body) {
  auto f = split_fields(body, 4);
  if (f.size() != 4) {
    return malformed("QTDV needs N:VALUE:BUILTIN:NAME");
  }
  auto number = number_field(f[0], "variable number");
  auto value = hex_field(f[1], "initial value");
  auto builtin = hex_field_max(f[2], "builtin flag", 1);
  auto name = from_hex_string(f[3]);
  if (!number || !value || !builtin) {
    return !number ? std::move(number).error() : !value ? std::move(value).error() : std::move(builtin).error();
  }
  if (!name) {
    return malformed(name.error().detail + " in variable name");
  }
  return TraceVariableDefinition{*number, static_cast<std::int64_t>(*value), *builtin == 1, std::move(*name)};
}

Result<TracepointLocation> parse_tracepoint_location(std::string_view body) {
  auto parts = fields::split_once(body, ':');
  if (!parts) {
    return malformed("tracepoint needs N:ADDR");
  }
  return location_fields(parts->first, parts->second);
}

Result<std::uint32_t> parse_qtv(std::string_view body) {
  auto n = fields::hex_field_max(body, "trace state variable", 0xffffffff);
  if (!n) {
    return std::move(n).error();
  }
  return static_cast<std::uint32_t>(*n);
}

std::string encode_trace_action(const TraceAction& a) {
  switch (a.kind) {
    case TraceAction::Kind::Registers:
      return "R" + a.register_mask;
    case TraceAction::Kind::Memory:
      return fmt::format("M{},{:x},{:x}", a.base_register < 0 ? std::string("-1") : fmt::format("{:X}", a.base_register),
                         a.offset, a.length);
    case TraceAction::Kind::Expression:
      return fmt::format("X{:x},{}", a.bytecode.size(), to_hex(a.bytecode));
  }
  return {};
}

Result<FrameSelection> parse_qtframe(std::string_view body) {
  FrameSelection out;
  auto two_addresses = [&](std::string_view text) -> Result<void> {
    auto parts = fields::split_once(text, ':');
    if (!parts) {
      return malformed("frame range needs START:END");
    }
    auto start = hex_field(parts->first, "range start");
    auto end = hex_field(parts->second, "range end");
    if (!start || !end) {
      return !start ? std::move(start).error() : std::move(end).error();
    }
    out.start = *start;
    out.end = *end;
    return base::success();
  };
  if (body.starts_with("pc:")) {
    out.kind = FrameSelection::Kind::Pc;
    auto pc = hex_field(body.substr(3), "frame pc");
    if (!pc) {
      return std::move(pc).error();
    }
    out.start = *pc;
    return out;
  }
  if (body.starts_with("tdp:")) {
    out.kind = FrameSelection::Kind::Tracepoint;
    auto number = number_field(body.substr(4), "tracepoint number");
    if (!number) {
      return std::move(number).error();
    }
    out.number = *number;
    return out;
  }
  if (body.starts_with("range:") || body.starts_with("outside:")) {
    const bool inside = body.starts_with("range:");
    out.kind = inside ? FrameSelection::Kind::InRange : FrameSelection::Kind::OutsideRange;
    auto ok = two_addresses(body.substr(inside ? 6 : 8));
    if (!ok) {
      return ok.error();
    }
    return out;
  }
  // A frame number; GDB sends -1 as the 32-bit ffffffff (some send "-1").
  if (body == "-1" || body == "ffffffff") {
    out.number = -1;
    return out;
  }
  auto number = hex_field_max(body, "frame number", 0x7fffffff);
  if (!number) {
    return std::move(number).error();
  }
  out.number = static_cast<std::int64_t>(*number);
  return out;
}

Result<std::vector<std::pair<std::uint64_t, std::uint64_t>>> parse_qtro(std::string_view body) {
  std::vector<std::pair<std::uint64_t, std::uint64_t>> out;
  while (!body.empty()) {
    const std::size_t colon = body.find(':');
    auto range = fields::split_once(body.substr(0, colon), ',');
    if (!range) {
      return malformed("read-only range needs START,END");
    }
    auto start = hex_field(range->first, "range start");
    auto end = hex_field(range->second, "range end");
    if (!start || !end) {
      return !start ? std::move(start).error() : std::move(end).error();
    }
    out.emplace_back(*start, *end);
    body = colon == std::string_view::npos ? std::string_view{} : body.substr(colon + 1);
    if (colon != std::string_view::npos && body.empty()) {
      return malformed("empty read-only range");
    }
  }
  return out;
}

Result<TraceBufferSetting> parse_qtbuffer(std::string_view body) {
  TraceBufferSetting out;
  if (body.starts_with("circular:")) {
    auto on = hex_field_max(body.substr(9), "circular flag", 1);
    if (!on) {
      return std::move(on).error();
    }
    out.circular = *on == 1;
    return out;
  }
  if (body.starts_with("size:")) {
    std::string_view size = body.substr(5);
    if (size == "-1") {
      out.size = -1;
      return out;
    }
    auto n = hex_field_max(size, "trace buffer size", 0x7fffffffffffffff);
    if (!n) {
      return std::move(n).error();
    }
    out.size = static_cast<std::int64_t>(*n);
    return out;
  }
  return malformed("QTBuffer wants size: or circular:");
}

Result<TraceNotes> parse_qtnotes(std::string_view body) {
  TraceNotes out;
  while (!body.empty()) {
    const std::size_t semi = body.find(';');
    if (semi == std::string_view::npos) {
      return malformed("trace note without its ';'");
    }
    auto field = fields::split_once(body.substr(0, semi), ':');
    if (!field) {
      return malformed("trace note without its name");
    }
    auto text = from_hex_string(field->second);
    if (!text) {
      return malformed(text.error().detail + " in trace note");
    }
    if (field->first == "user") {
      out.user = std::move(*text);
    } else if (field->first == "notes") {
      out.notes = std::move(*text);
    } else if (field->first == "tstop") {
      out.stop_note = std::move(*text);
    } else {
      return malformed("unknown trace note '" + std::string(field->first) + "'");
    }
    body.remove_prefix(semi + 1);
  }
  return out;
}

}  // namespace protocol
