// The client's side of requests.hpp: whole request packets, for a server of ours that is itself
// GDB's side to another stub (Valgrind's gdbserver). Each encoder writes what the matching
// parser reads, so one grammar serves both directions (tested as round trips).
#pragma once

#include <string>

#include "protocol/requests.hpp"

namespace protocol {

// Hg / Hc with the thread in the single-process form ("Hg65").
std::string encode_set_thread(const SetThread& req);
// T<thread-id>
std::string encode_thread_alive(const ThreadId& thread);
// mADDR,LEN
std::string encode_read_mem(const ReadMem& req);
// MADDR,LEN:HEX
std::string encode_write_mem_hex(const WriteMem& req);
// Z/z TYPE,ADDR,KIND (conditions and commands are not sent: GDB's side evaluates them).
std::string encode_breakpoint(const BreakpointReq& req, bool insert);
// c / s, or C SIG / S SIG (op: 'c' or 's'; the address form is not sent).
std::string encode_legacy_resume(char op, const LegacyResume& req);
// QCatchSyscalls:0, :1, :1;NR;NR...
std::string encode_catch_syscalls(const CatchSyscalls& req);
// qGetTLSAddr:THREAD,OFFSET,LM
std::string encode_tls_address(const TlsAddressQuery& req);
// qXfer:OBJECT:read:ANNEX:OFFSET,LENGTH
std::string encode_xfer_read(const XferRead& req);

}  // namespace protocol
