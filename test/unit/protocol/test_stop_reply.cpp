// Stop reply encoding, checked against transcript shapes.
#include <catch2/catch.hpp>

#include "protocol/hex.hpp"
#include "protocol/stop_reply.hpp"

using protocol::StopReply;
using protocol::ThreadId;

namespace {

protocol::Bytes hex(std::string_view h) { return *protocol::from_hex(h); }

StopReply stopped(int sig) {
  StopReply r;
  r.kind = StopReply::Kind::Stopped;
  r.gdb_signal = sig;
  r.thread = ThreadId{0x39d5, 0x39d5};
  return r;
}

}  // namespace

TEST_CASE("T reply: breakpoint hit as in the transcripts", "[stop_reply]") {
  StopReply r = stopped(5);
  r.why = StopReply::Why::SwBreak;
  r.registers = {{6, hex("90e5ffffff7f0000")}, {7, hex("78e5ffffff7f0000")}, {0x10, hex("4e51555555550000")}};
  r.core = 1;
  CHECK(protocol::encode_stop_reply(r, true) ==
        "T05swbreak:;06:90e5ffffff7f0000;07:78e5ffffff7f0000;10:4e51555555550000;thread:p39d5.39d5;core:1;");
  CHECK(protocol::encode_stop_reply(r, false) ==
        "T05swbreak:;06:90e5ffffff7f0000;07:78e5ffffff7f0000;10:4e51555555550000;thread:39d5;core:1;");
}

TEST_CASE("T reply: reasons, no registers, no core", "[stop_reply]") {
  StopReply r = stopped(0);
  CHECK(protocol::encode_stop_reply(r, true) == "T00thread:p39d5.39d5;");
  r.gdb_signal = 0xb;
  r.core = 0x1f;
  CHECK(protocol::encode_stop_reply(r, true) == "T0bthread:p39d5.39d5;core:1f;");
  r = stopped(5);
  r.why = StopReply::Why::HwBreak;
  CHECK(protocol::encode_stop_reply(r, true) == "T05hwbreak:;thread:p39d5.39d5;");
  r.why = StopReply::Why::Watch;
  r.watch_addr = 0x55555555801c;
  CHECK(protocol::encode_stop_reply(r, true) == "T05watch:000055555555801c;thread:p39d5.39d5;");
  r.why = StopReply::Why::ReadWatch;
  CHECK(protocol::encode_stop_reply(r, true) == "T05rwatch:000055555555801c;thread:p39d5.39d5;");
  r.why = StopReply::Why::AccessWatch;
  CHECK(protocol::encode_stop_reply(r, true) == "T05awatch:000055555555801c;thread:p39d5.39d5;");
}

TEST_CASE("T reply: syscall entry and return, the number in hex as gdbserver sends it", "[stop_reply]") {
  StopReply r = stopped(5);
  r.why = StopReply::Why::SyscallEntry;
  r.syscall = 0x3b;
  r.registers = {{0x10, hex("4e51555555550000")}};
  CHECK(protocol::encode_stop_reply(r, true) == "T05syscall_entry:3b;10:4e51555555550000;thread:p39d5.39d5;");
  r.why = StopReply::Why::SyscallReturn;
  r.syscall = 0;
  CHECK(protocol::encode_stop_reply(r, false) == "T05syscall_return:0;10:4e51555555550000;thread:39d5;");
}

TEST_CASE("T reply: register numbers above 0xff", "[stop_reply]") {
  StopReply r = stopped(5);
  r.registers = {{0x94, hex("00000000")}, {0x123, hex("ff")}};
  CHECK(protocol::encode_stop_reply(r, true) == "T0594:00000000;123:ff;thread:p39d5.39d5;");
}

TEST_CASE("W and X replies", "[stop_reply]") {
  StopReply w;
  w.kind = StopReply::Kind::Exited;
  w.exit_status = 0;
  w.pid = 0x1a;
  CHECK(protocol::encode_stop_reply(w, true) == "W00;process:1a");
  CHECK(protocol::encode_stop_reply(w, false) == "W00");
  w.exit_status = 3;
  CHECK(protocol::encode_stop_reply(w, true) == "W03;process:1a");

  StopReply x;
  x.kind = StopReply::Kind::Terminated;
  x.gdb_signal = 0xb;
  x.pid = 0x382b;
  CHECK(protocol::encode_stop_reply(x, true) == "X0b;process:382b");
  CHECK(protocol::encode_stop_reply(x, false) == "X0b");
}
