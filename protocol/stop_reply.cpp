// Stop reply encoding: T (signal, reason, expedited registers, thread, core), W and X.
#include "protocol/stop_reply.hpp"

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

}  // namespace protocol
