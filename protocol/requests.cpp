// Pure parsers for request packets. Strict: trailing garbage, lengths that disagree with the
// data and ranges that wrap around the address space are all Errc::malformed.
#include "protocol/requests.hpp"

#include <array>
#include <limits>
#include <utility>

#include "protocol/framing.hpp"
#include "protocol/request_fields.hpp"

namespace protocol {

namespace {

using fields::hex_field;
using fields::hex_field_max;
using fields::malformed;
using fields::split_once;
using fields::split_three;

constexpr std::uint64_t kMaxRegno = 0xfff;
constexpr std::uint64_t kMaxBreakpointKind = 0xffff;
constexpr std::uint64_t kMaxGdbSignal = 0xff;
constexpr std::uint64_t kMaxSyscallNumber = 0x7fffffff;

// [addr, addr + len) must not wrap past the top of the address space.
bool range_wraps(std::uint64_t addr, std::uint64_t len) {
  return len != 0 && len - 1 > std::numeric_limits<std::uint64_t>::max() - addr;
}

// "ADDR,LEN" shared by m, M and X.
Result<ReadMem> parse_addr_len(std::string_view text) {
  auto parts = split_once(text, ',');
  if (!parts) {
    return malformed("missing ',' after address");
  }
  auto addr = hex_field(parts->first, "address");
  if (!addr) {
    return std::move(addr).error();
  }
  auto len = hex_field(parts->second, "length");
  if (!len) {
    return std::move(len).error();
  }
  if (range_wraps(*addr, *len)) {
    return malformed("address range wraps around");
  }
  return ReadMem{*addr, *len};
}

// The vCont actions we take, as vCont? lists them; parse_vcont_verb refuses any other.
constexpr std::string_view kVContVerbs = "cCsStr";

// One vCont action without its ":TID" suffix.
Result<VContAction> parse_vcont_verb(std::string_view text) {
  VContAction act;
  if (text.empty()) {
    return malformed("missing vCont action");
  }
  char verb = text.front();
  if (kVContVerbs.find(verb) == std::string_view::npos) {
    return malformed("unknown vCont action");
  }
  std::string_view arg = text.substr(1);
  switch (verb) {
    case 'c':
    case 's':
    case 't':
      if (!arg.empty()) {
        return malformed("unexpected text after vCont action");
      }
      act.action = verb;
      return act;
    case 'C':
    case 'S': {
      auto sig = hex_field_max(arg, "signal", kMaxGdbSignal);
      if (!sig) {
        return std::move(sig).error();
      }
      act.action = verb == 'C' ? 'c' : 's';
      act.gdb_signal = static_cast<int>(*sig);
      return act;
    }
    case 'r': {
      auto bounds = split_once(arg, ',');
      if (!bounds) {
        return malformed("missing ',' in range step");
      }
      auto start = hex_field(bounds->first, "range start");
      if (!start) {
        return std::move(start).error();
      }
      auto end = hex_field(bounds->second, "range end");
      if (!end) {
        return std::move(end).error();
      }
      if (*end < *start) {
        return malformed("range step ends before it starts");
      }
      act.action = 'r';
      act.range_start = *start;
      act.range_end = *end;
      return act;
    }
    default:
      return malformed("unknown vCont action");
  }
}

}  // namespace

std::string vcont_supported_reply() {
  std::string reply = "vCont";
  for (char verb : kVContVerbs) {
    reply += ';';
    reply += verb;
  }
  return reply;
}

Result<std::vector<std::string>> parse_qsupported(std::string_view body) {
  std::vector<std::string> features;
  if (body.empty()) {
    return features;
  }
  if (body.front() != ':') {
    return malformed("missing ':' before features");
  }
  body.remove_prefix(1);
  while (!body.empty()) {
    std::size_t semi = body.find(';');
    std::string_view item = body.substr(0, semi);
    if (!item.empty()) {
      features.emplace_back(item);
    }
    body = semi == std::string_view::npos ? std::string_view{} : body.substr(semi + 1);
  }
  return features;
}

Result<SetThread> parse_set_thread(std::string_view body) {
  if (body.empty() || (body.front() != 'g' && body.front() != 'c')) {
    return malformed("H operation must be 'g' or 'c'");
  }
  auto thread = parse_thread_id(body.substr(1));
  if (!thread) {
    return std::move(thread).error();
  }
  return SetThread{body.front(), *thread};
}

Result<TlsAddressQuery> parse_tls_address(std::string_view body) {
  auto first = split_once(body, ',');
  auto rest = first ? split_once(first->second, ',') : std::nullopt;
  if (!rest) {
    return malformed("expected THREAD,OFFSET,LM");
  }
  auto thread = parse_thread_id(first->first);
  auto offset = parse_hex_u64(rest->first);
  auto link_map = parse_hex_u64(rest->second);
  if (!thread || !offset || !link_map) {
    return malformed("bad thread, offset or link map");
  }
  return TlsAddressQuery{*thread, *offset, *link_map};
}

Result<ReadMem> parse_read_mem(std::string_view body) { return parse_addr_len(body); }

Result<WriteMem> parse_write_mem_hex(std::string_view body) {
  auto parts = split_once(body, ':');
  if (!parts) {
    return malformed("missing ':' before data");
  }
  auto range = parse_addr_len(parts->first);
  if (!range) {
    return std::move(range).error();
  }
  auto data = from_hex(parts->second);
  if (!data) {
    return malformed(data.error().detail + " in data");
  }
  if (data->size() != range->len) {
    return malformed("length does not match data");
  }
  return WriteMem{range->addr, std::move(*data)};
}

Result<WriteMem> parse_write_mem_binary(std::string_view body) {
  auto parts = split_once(body, ':');
  if (!parts) {
    return malformed("missing ':' before data");
  }
  auto range = parse_addr_len(parts->first);
  if (!range) {
    return std::move(range).error();
  }
  auto data = unescape_binary(parts->second);
  if (!data) {
    return std::move(data).error();
  }
  if (data->size() != range->len) {
    return malformed("length does not match data");
  }
  return WriteMem{range->addr, std::move(*data)};
}

Result<int> parse_read_reg(std::string_view body) {
  auto regno = hex_field_max(body, "register number", kMaxRegno);
  if (!regno) {
    return std::move(regno).error();
  }
  return static_cast<int>(*regno);
}

Result<WriteReg> parse_write_reg(std::string_view body) {
  auto parts = split_once(body, '=');
  if (!parts) {
    return malformed("missing '=' after register number");
  }
  auto regno = hex_field_max(parts->first, "register number", kMaxRegno);
  if (!regno) {
    return std::move(regno).error();
  }
  auto value = from_hex(parts->second);
  if (!value) {
    return malformed(value.error().detail + " in register value");
  }
  if (value->empty()) {
    return malformed("empty register value");
  }
  return WriteReg{static_cast<int>(*regno), std::move(*value)};
}

namespace {

// "X LEN,HEX[X LEN,HEX]..." up to the next ';' or the end: agent expressions, concatenated with
// no separator (each one's length says where it ends). what names them in errors.
Result<std::vector<Bytes>> parse_expressions(std::string_view& rest, const std::string& what) {
  std::vector<Bytes> expressions;
  while (!rest.empty() && rest.front() != ';') {
    auto code = fields::take_expression(rest, what);
    if (!code) {
      return std::move(code).error();
    }
    expressions.push_back(std::move(*code));
  }
  return expressions;
}

// What follows a Z packet's kind: ";X..." conditions, then ";cmds:PERSIST,X..." commands.
Result<void> parse_breakpoint_agent(std::string_view rest, BreakpointReq& req) {
  if (rest.starts_with(";X")) {
    rest.remove_prefix(1);
    auto conditions = parse_expressions(rest, "condition");
    if (!conditions) {
      return std::move(conditions).error();
    }
    req.conditions = std::move(*conditions);
  }
  if (rest.starts_with(";cmds:")) {
    rest.remove_prefix(6);
    const std::size_t comma = rest.find(',');
    if (comma == std::string_view::npos || (rest.substr(0, comma) != "0" && rest.substr(0, comma) != "1")) {
      return malformed("cmds: needs PERSIST (0 or 1) and a comma");
    }
    req.persist = rest.front() == '1';
    rest.remove_prefix(comma + 1);
    auto commands = parse_expressions(rest, "command");
    if (!commands) {
      return std::move(commands).error();
    }
    req.commands = std::move(*commands);
  }
  if (!rest.empty()) {
    return malformed("unknown breakpoint parameter '" + std::string(rest.substr(0, 16)) + "'");
  }
  return base::success();
}

}  // namespace

Result<BreakpointReq> parse_breakpoint(std::string_view body) {
  BreakpointReq req;
  const std::size_t semi = body.find(';');
  if (semi != std::string_view::npos) {
    if (auto ok = parse_breakpoint_agent(body.substr(semi), req); !ok) {
      return std::move(ok).error();
    }
  }
  body = body.substr(0, semi);
  auto fields = split_three(body, "breakpoint type", "breakpoint address");
  if (!fields) {
    return std::move(fields).error();
  }
  const auto& [first, second, third] = *fields;
  auto type = hex_field_max(first, "breakpoint type", 4);
  if (!type) {
    return std::move(type).error();
  }
  auto addr = hex_field(second, "address");
  if (!addr) {
    return std::move(addr).error();
  }
  auto kind = hex_field_max(third, "breakpoint kind", kMaxBreakpointKind);
  if (!kind) {
    return std::move(kind).error();
  }
  if (range_wraps(*addr, *kind)) {
    return malformed("address range wraps around");
  }
  req.type = static_cast<int>(*type);
  req.addr = *addr;
  req.kind = static_cast<int>(*kind);
  return req;
}

Result<std::vector<VContAction>> parse_vcont(std::string_view body) {
  if (body.empty() || body.front() != ';') {
    return malformed("vCont needs at least one action");
  }
  std::vector<VContAction> actions;
  body.remove_prefix(1);
  while (true) {
    std::size_t semi = body.find(';');
    std::string_view item = body.substr(0, semi);
    if (item.empty()) {
      return malformed("empty vCont action");
    }
    std::size_t colon = item.find(':');
    auto act = parse_vcont_verb(item.substr(0, colon));
    if (!act) {
      return std::move(act).error();
    }
    if (colon != std::string_view::npos) {
      auto thread = parse_thread_id(item.substr(colon + 1));
      if (!thread) {
        return std::move(thread).error();
      }
      act->thread = *thread;
    }
    actions.push_back(std::move(*act));
    if (semi == std::string_view::npos) {
      break;
    }
    body.remove_prefix(semi + 1);
  }
  return actions;
}

Result<LegacyResume> parse_legacy_resume(std::string_view body, bool with_signal) {
  LegacyResume req;
  std::string_view addr_text = body;
  if (with_signal) {
    auto parts = split_once(body, ';');
    auto sig = hex_field_max(parts ? parts->first : body, "signal", kMaxGdbSignal);
    if (!sig) {
      return std::move(sig).error();
    }
    req.gdb_signal = static_cast<int>(*sig);
    if (!parts) {
      return req;
    }
    addr_text = parts->second;
  } else if (body.empty()) {
    return req;
  }
  auto addr = hex_field(addr_text, "address");
  if (!addr) {
    return std::move(addr).error();
  }
  req.addr = *addr;
  return req;
}

Result<XferRead> parse_xfer_read(std::string_view body) {
  auto object = split_once(body, ':');
  if (!object || object->first.empty()) {
    return malformed("missing qXfer object");
  }
  auto op = split_once(object->second, ':');
  if (!op || op->first != "read") {
    return malformed("qXfer operation is not read");
  }
  std::size_t colon = op->second.rfind(':');
  if (colon == std::string_view::npos) {
    return malformed("missing ':' before offset");
  }
  auto range = split_once(op->second.substr(colon + 1), ',');
  if (!range) {
    return malformed("missing ',' after offset");
  }
  auto offset = hex_field(range->first, "offset");
  if (!offset) {
    return std::move(offset).error();
  }
  auto length = hex_field(range->second, "length");
  if (!length) {
    return std::move(length).error();
  }
  return XferRead{std::string(object->first), std::string(op->second.substr(0, colon)), *offset, *length};
}

Result<XferWrite> parse_xfer_write(std::string_view body) {
  auto object = split_once(body, ':');
  if (!object || object->first.empty()) {
    return malformed("missing qXfer object");
  }
  auto op = split_once(object->second, ':');
  if (!op || op->first != "write") {
    return malformed("qXfer operation is not write");
  }
  auto annex = split_once(op->second, ':');
  if (!annex) {
    return malformed("missing ':' after annex");
  }
  auto offset_data = split_once(annex->second, ':');
  if (!offset_data) {
    return malformed("missing ':' after offset");
  }
  auto offset = hex_field(offset_data->first, "offset");
  if (!offset) {
    return std::move(offset).error();
  }
  auto data = unescape_binary(offset_data->second);
  if (!data) {
    return std::move(data).error();
  }
  return XferWrite{std::string(object->first), std::string(annex->first), *offset, std::move(*data)};
}

Result<std::vector<int>> parse_signal_list(std::string_view body) {
  std::vector<int> signals;
  while (!body.empty()) {
    std::size_t semi = body.find(';');
    auto sig = hex_field_max(body.substr(0, semi), "signal", kMaxGdbSignal);
    if (!sig) {
      return std::move(sig).error();
    }
    signals.push_back(static_cast<int>(*sig));
    body = semi == std::string_view::npos ? std::string_view{} : body.substr(semi + 1);
  }
  return signals;
}

Result<std::vector<PermissionChange>> parse_qallow(std::string_view body) {
  std::vector<PermissionChange> out;
  while (!body.empty()) {
    const std::size_t semi = body.find(';');
    const std::string_view item = body.substr(0, semi);
    const std::size_t colon = item.find(':');
    if (colon == std::string_view::npos || colon == 0) {
      return base::make_error(base::Errc::malformed, "QAllow: OP:VALUE expected");
    }
    auto value = hex_field_max(item.substr(colon + 1), "QAllow value", 1);
    if (!value) {
      return std::move(value).error();
    }
    out.push_back({std::string(item.substr(0, colon)), *value != 0});
    body = semi == std::string_view::npos ? std::string_view{} : body.substr(semi + 1);
  }
  return out;
}

void apply_permissions(const std::vector<PermissionChange>& changes, Permissions& permissions) {
  static const std::pair<std::string_view, bool Permissions::*> kOps[] = {
      {"WriteReg", &Permissions::write_registers},
      {"WriteMem", &Permissions::write_memory},
      {"InsertBreak", &Permissions::insert_breakpoints},
      {"InsertTrace", &Permissions::insert_tracepoints},
      {"InsertFastTrace", &Permissions::insert_fast_tracepoints},
      {"Stop", &Permissions::stop},
  };
  for (const PermissionChange& c : changes) {
    for (const auto& [name, field] : kOps) {
      if (c.op == name) {
        permissions.*field = c.allowed;
      }
    }
  }
}

Result<CatchSyscalls> parse_catch_syscalls(std::string_view body) {
  CatchSyscalls out;
  if (body == "0") {
    return out;
  }
  if (!body.starts_with('1') || (body.size() > 1 && body[1] != ';')) {
    return malformed("unknown catch-syscalls mode '" + std::string(body) + "'");
  }
  out.enabled = true;
  if (body == "1;") {
    return malformed("empty syscall list");
  }
  body.remove_prefix(body.size() > 1 ? 2 : 1);
  while (!body.empty()) {
    std::size_t semi = body.find(';');
    auto number = hex_field_max(body.substr(0, semi), "syscall number", kMaxSyscallNumber);
    if (!number) {
      return std::move(number).error();
    }
    out.numbers.push_back(static_cast<int>(*number));
    body = semi == std::string_view::npos ? std::string_view{} : body.substr(semi + 1);
  }
  return out;
}

Result<std::vector<ThreadOptionsEntry>> parse_thread_options(std::string_view body) {
  std::vector<ThreadOptionsEntry> entries;
  for (;;) {
    const std::size_t semi = body.find(';');
    const std::string_view item = body.substr(0, semi);
    const std::size_t colon = item.find(':');
    auto options = hex_field_max(item.substr(0, colon), "thread options", 0xffffffff);
    if (!options) {
      return std::move(options).error();
    }
    ThreadOptionsEntry entry;
    entry.options = static_cast<std::uint32_t>(*options);
    if (colon != std::string_view::npos) {
      auto thread = parse_thread_id(item.substr(colon + 1));
      if (!thread) {
        return std::move(thread).error();
      }
      entry.thread = *thread;
    }
    entries.push_back(entry);
    if (semi == std::string_view::npos) {
      return entries;
    }
    body.remove_prefix(semi + 1);
  }
}

Result<Svr4Annex> parse_svr4_annex(std::string_view annex) {
  Svr4Annex out;
  while (!annex.empty()) {
    const std::size_t semi = annex.find(';');
    const std::string_view item = annex.substr(0, semi);
    annex.remove_prefix(semi == std::string_view::npos ? annex.size() : semi + 1);
    const std::size_t eq = item.find('=');
    if (eq == std::string_view::npos) {
      return malformed("no '=' in libraries-svr4 annex");
    }
    const std::string_view name = item.substr(0, eq);
    std::uint64_t* field = name == "start" ? &out.start : name == "prev" ? &out.prev : name == "lmid" ? &out.lmid : nullptr;
    if (field == nullptr) {
      continue;
    }
    auto value = parse_hex_u64(item.substr(eq + 1));
    if (!value) {
      return malformed("bad address in libraries-svr4 annex");
    }
    *field = *value;
  }
  return out;
}

Result<std::vector<std::string>> parse_vrun(std::string_view body) {
  if (body.empty() || body.front() != ';') {
    return malformed("missing ';' before program");
  }
  std::vector<std::string> argv;
  body.remove_prefix(1);
  while (true) {
    std::size_t semi = body.find(';');
    auto arg = from_hex_string(body.substr(0, semi));
    if (!arg) {
      return malformed(arg.error().detail + " in vRun argument");
    }
    if (arg->find('\0') != std::string::npos) {
      return malformed("NUL byte in vRun argument");
    }
    argv.push_back(std::move(*arg));
    if (semi == std::string_view::npos) {
      break;
    }
    body.remove_prefix(semi + 1);
  }
  return argv;
}

Result<std::optional<std::int64_t>> parse_optional_pid(std::string_view body) {
  if (body.empty()) {
    return std::optional<std::int64_t>{};
  }
  if (body.front() != ';' && body.front() != ':') {
    return malformed("missing separator before pid");
  }
  auto pid = hex_field_max(body.substr(1), "pid", std::numeric_limits<std::int32_t>::max());
  if (!pid) {
    return std::move(pid).error();
  }
  return std::optional<std::int64_t>{static_cast<std::int64_t>(*pid)};
}

Result<std::string> parse_qrcmd(std::string_view body) {
  if (body.empty() || body.front() != ',') {
    return malformed("missing ',' before command");
  }
  auto text = from_hex_string(body.substr(1));
  if (!text) {
    return malformed(text.error().detail + " in command");
  }
  return text;
}

}  // namespace protocol
