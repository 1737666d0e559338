// Stop replies both ways: T (signal, reason, expedited registers, thread, core), W, X, w, N.
#include "protocol/stop_reply.hpp"

#include "protocol/request_fields.hpp"

namespace protocol {

namespace {

// Exit statuses and signals are sent as at least two hex digits ("W00", "T05").
std::string hex_byte(int value) { return hex_fixed(static_cast<std::uint64_t>(value) & 0xff, 2); }

void append_why(std::string& out, const StopReply& reply, bool multiprocess) {
  switch (reply.why) {
    case StopReply::Why::None:
      break;
    case StopReply::Why::SwBreak:
      out += "swbreak:;";
      break;
    case StopReply::Why::HwBreak:
      out += "hwbreak:;";
      break;
    case StopReply::Why::Watch:
      out += "watch:" + hex_fixed(reply.watch_addr, 16) + ";";
      break;
    case StopReply::Why::ReadWatch:
      out += "rwatch:" + hex_fixed(reply.watch_addr, 16) + ";";
      break;
    case StopReply::Why::AccessWatch:
      out += "awatch:" + hex_fixed(reply.watch_addr, 16) + ";";
      break;
    case StopReply::Why::Fork:
      out += "fork:" + format_thread_id(reply.child, multiprocess) + ";";
      break;
    case StopReply::Why::VFork:
      out += "vfork:" + format_thread_id(reply.child, multiprocess) + ";";
      break;
    case StopReply::Why::VForkDone:
      out += "vforkdone:;";
      break;
    case StopReply::Why::Clone:
      out += "clone:" + format_thread_id(reply.child, multiprocess) + ";";
      break;
    case StopReply::Why::SyscallEntry:
      out += "syscall_entry:" + hex_u64(static_cast<std::uint32_t>(reply.syscall)) + ";";
      break;
    case StopReply::Why::SyscallReturn:
      out += "syscall_return:" + hex_u64(static_cast<std::uint32_t>(reply.syscall)) + ";";
      break;
  }
}

std::string encode_stopped(const StopReply& reply, bool multiprocess) {
  if (reply.signal_only) {
    return "S" + hex_byte(reply.gdb_signal);
  }
  std::string out = "T" + hex_byte(reply.gdb_signal);
  if (!reply.exec_path.empty()) {
    out += "exec:" + to_hex(reply.exec_path) + ";";
  }
  append_why(out, reply, multiprocess);
  for (const auto& [regno, bytes] : reply.registers) {
    std::string num = hex_u64(static_cast<std::uint64_t>(regno));
    if (num.size() < 2) {
      num.insert(num.begin(), '0');
    }
    out += num + ":" + to_hex(bytes) + ";";
  }
  if (reply.thread_field) {
    out += "thread:" + format_thread_id(reply.thread, multiprocess) + ";";
  }
  if (reply.core >= 0) {
    out += "core:" + hex_u64(static_cast<std::uint64_t>(reply.core)) + ";";
  }
  return out;
}

}  // namespace

std::string encode_stop_reply(const StopReply& reply, bool multiprocess) {
  std::string out;
  switch (reply.kind) {
    case StopReply::Kind::Stopped:
      return encode_stopped(reply, multiprocess);
    case StopReply::Kind::Exited:
      out = "W" + hex_byte(reply.exit_status);
      break;
    case StopReply::Kind::Terminated:
      out = "X" + hex_byte(reply.gdb_signal);
      break;
    case StopReply::Kind::ThreadExited:
      return "w" + hex_byte(reply.exit_status) + ";" + format_thread_id(reply.thread, multiprocess);
    case StopReply::Kind::NoResumed:
      return "N";
  }
  if (multiprocess) {
    out += ";process:" + hex_u64(static_cast<std::uint64_t>(reply.pid));
  }
  return out;
}

std::string encode_console_output(std::string_view text) { return "O" + to_hex(text); }

namespace {

// A two-digit hex field (signal, exit status) right after the reply's letter.
base::Result<int> leading_byte(std::string_view text) {
  auto value = parse_hex_u64(text.substr(1, 2));
  if (text.size() < 3 || !value) {
    return fields::malformed("stop reply without its two hex digits");
  }
  return static_cast<int>(*value);
}

// One "key:value" field of a T reply into reply.
void read_field(StopReply& reply, std::string_view key, std::string_view value) {
  auto hex = [&]() { return parse_hex_u64(value); };
  auto set_why = [&](StopReply::Why why) { reply.why = why; };
  if (key == "thread") {
    if (auto id = parse_thread_id(value)) {
      reply.thread = *id;
    }
  } else if (key == "core") {
    if (auto core = hex(); core && *core <= 0x7fffffff) {
      reply.core = static_cast<int>(*core);
    }
  } else if (key == "swbreak" || key == "hwbreak" || key == "vforkdone") {
    set_why(key == "swbreak" ? StopReply::Why::SwBreak
            : key == "hwbreak" ? StopReply::Why::HwBreak
                               : StopReply::Why::VForkDone);
  } else if (key == "watch" || key == "rwatch" || key == "awatch") {
    if (auto addr = hex()) {
      reply.watch_addr = *addr;
      set_why(key == "watch" ? StopReply::Why::Watch
              : key == "rwatch" ? StopReply::Why::ReadWatch
                                : StopReply::Why::AccessWatch);
    }
  } else if (key == "fork" || key == "vfork" || key == "clone") {
    if (auto id = parse_thread_id(value)) {
      reply.child = *id;
      set_why(key == "fork" ? StopReply::Why::Fork : key == "vfork" ? StopReply::Why::VFork : StopReply::Why::Clone);
    }
  } else if (key == "syscall_entry" || key == "syscall_return") {
    if (auto number = hex(); number && *number <= 0x7fffffff) {
      reply.syscall = static_cast<int>(*number);
      set_why(key == "syscall_entry" ? StopReply::Why::SyscallEntry : StopReply::Why::SyscallReturn);
    }
  } else if (key == "exec") {
    if (auto path = from_hex(value)) {
      reply.exec_path.assign(path->begin(), path->end());
    }
  } else if (!key.empty() && key.size() <= 4 && key.find_first_not_of("0123456789abcdefABCDEF") == std::string_view::npos) {
    auto regno = parse_hex_u64(key);
    auto bytes = from_hex(value);
    if (regno && bytes) {
      reply.registers.emplace_back(static_cast<int>(*regno), std::move(*bytes));
    }
  }
}

}  // namespace

base::Result<StopReply> parse_stop_reply(std::string_view text) {
  StopReply reply;
  if (text == "N") {
    reply.kind = StopReply::Kind::NoResumed;
    return reply;
  }
  if (text.empty() || std::string_view("STWXw").find(text.front()) == std::string_view::npos) {
    return fields::malformed("not a stop reply");
  }
  auto byte = leading_byte(text);
  if (!byte) {
    return std::move(byte).error();
  }
  const char letter = text.front();
  std::string_view rest = text.substr(3);
  switch (letter) {
    case 'W':
    case 'X':
      reply.kind = letter == 'W' ? StopReply::Kind::Exited : StopReply::Kind::Terminated;
      (letter == 'W' ? reply.exit_status : reply.gdb_signal) = *byte;
      if (rest.starts_with(";process:")) {
        if (auto pid = parse_hex_u64(rest.substr(9))) {
          reply.pid = static_cast<std::int64_t>(*pid);
        }
      }
      return reply;
    case 'w':
      reply.kind = StopReply::Kind::ThreadExited;
      reply.exit_status = *byte;
      if (rest.starts_with(";")) {
        if (auto id = parse_thread_id(rest.substr(1))) {
          reply.thread = *id;
        }
      }
      return reply;
    case 'S':
      reply.gdb_signal = *byte;
      reply.signal_only = true;
      reply.thread_field = false;
      return reply;
    default:
      break;
  }
  reply.gdb_signal = *byte;
  reply.thread_field = false;
  while (!rest.empty()) {
    const std::size_t semi = rest.find(';');
    const std::string_view field = rest.substr(0, semi);
    const std::size_t colon = field.find(':');
    if (colon != std::string_view::npos) {
      const std::string_view key = field.substr(0, colon);
      read_field(reply, key, field.substr(colon + 1));
      reply.thread_field = reply.thread_field || key == "thread";
    }
    if (semi == std::string_view::npos) {
      break;
    }
    rest.remove_prefix(semi + 1);
  }
  return reply;
}

}  // namespace protocol
