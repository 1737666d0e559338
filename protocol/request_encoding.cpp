#include "protocol/request_encoding.hpp"

namespace protocol {

std::string encode_set_thread(const SetThread& req) {
  return std::string("H") + req.op + format_thread_id(req.thread, false);
}

std::string encode_thread_alive(const ThreadId& thread) { return "T" + format_thread_id(thread, false); }

std::string encode_read_mem(const ReadMem& req) { return "m" + hex_u64(req.addr) + "," + hex_u64(req.len); }

std::string encode_write_mem_hex(const WriteMem& req) {
  return "M" + hex_u64(req.addr) + "," + hex_u64(req.data.size()) + ":" + to_hex(req.data);
}

std::string encode_breakpoint(const BreakpointReq& req, bool insert) {
  return std::string(1, insert ? 'Z' : 'z') + std::to_string(req.type) + "," + hex_u64(req.addr) + "," +
         hex_u64(static_cast<std::uint64_t>(req.kind));
}

std::string encode_legacy_resume(char op, const LegacyResume& req) {
  if (req.gdb_signal == 0) {
    return std::string(1, op);
  }
  return std::string(1, op == 's' ? 'S' : 'C') + hex_fixed(static_cast<std::uint64_t>(req.gdb_signal), 2);
}

std::string encode_catch_syscalls(const CatchSyscalls& req) {
  std::string out = req.enabled ? "QCatchSyscalls:1" : "QCatchSyscalls:0";
  for (int number : req.numbers) {
    out += ";" + hex_u64(static_cast<std::uint32_t>(number));
  }
  return out;
}

std::string encode_tls_address(const TlsAddressQuery& req) {
  return "qGetTLSAddr:" + format_thread_id(req.thread, false) + "," + hex_u64(req.offset) + "," +
         hex_u64(req.link_map);
}

std::string encode_xfer_read(const XferRead& req) {
  return "qXfer:" + req.object + ":read:" + req.annex + ":" + hex_u64(req.offset) + "," + hex_u64(req.length);
}

}  // namespace protocol
