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

TEST_CASE("T reply: a clone event names the new thread, as gdbserver 15 and later send it", "[stop_reply]") {
  StopReply r = stopped(5);
  r.thread = {0x791a, 0x791a};
  r.why = StopReply::Why::Clone;
  r.child = {0x791a, 0x791d};
  CHECK(protocol::encode_stop_reply(r, true) == "T05clone:p791a.791d;thread:p791a.791a;");
  CHECK(protocol::encode_stop_reply(r, false) == "T05clone:791d;thread:791a;");
  auto back = protocol::parse_stop_reply("T05clone:p791a.791d;thread:p791a.791a;");
  REQUIRE(back.ok());
  CHECK(back->why == StopReply::Why::Clone);
  CHECK(back->child == protocol::ThreadId{0x791a, 0x791d});
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

namespace {

// encode, then parse: the same reply (the fields the wire carries).
void check_round_trip(const protocol::StopReply& r, bool multiprocess) {
  const std::string wire = protocol::encode_stop_reply(r, multiprocess);
  INFO(wire);
  auto back = protocol::parse_stop_reply(wire);
  REQUIRE(back);
  CHECK(back->kind == r.kind);
  CHECK(protocol::encode_stop_reply(*back, multiprocess) == wire);
}

}  // namespace

TEST_CASE("stop replies read back what encode_stop_reply writes", "[stop_reply]") {
  using R = protocol::StopReply;
  R t;
  t.gdb_signal = 5;
  t.thread = {0x10, 0x11};
  t.registers = {{6, protocol::Bytes(8, 0x11)}, {7, protocol::Bytes(8, 0x22)}, {0x10, protocol::Bytes(8, 0x33)}};
  t.core = 1;
  for (R::Why why : {R::Why::None, R::Why::SwBreak, R::Why::HwBreak, R::Why::Watch, R::Why::ReadWatch,
                     R::Why::AccessWatch, R::Why::Fork, R::Why::VFork, R::Why::VForkDone, R::Why::Clone, R::Why::SyscallEntry,
                     R::Why::SyscallReturn}) {
    t.why = why;
    t.watch_addr = 0x601040;
    t.child = {0x20, 0x20};
    t.syscall = 0x3b;
    check_round_trip(t, true);
    check_round_trip(t, false);
  }
  t.why = R::Why::None;
  t.exec_path = "/bin/true";
  check_round_trip(t, true);
  R s;
  s.signal_only = true;
  s.gdb_signal = 2;
  check_round_trip(s, false);
  R w{.kind = R::Kind::Exited, .exit_status = 7, .pid = 0x64};
  check_round_trip(w, true);
  check_round_trip(w, false);
  R x{.kind = R::Kind::Terminated, .gdb_signal = 9, .pid = 0x64};
  check_round_trip(x, true);
  R te{.kind = R::Kind::ThreadExited, .exit_status = 0, .thread = {0x64, 0x65}};
  check_round_trip(te, true);
  check_round_trip(R{.kind = R::Kind::NoResumed}, false);
}

TEST_CASE("stop replies from another stub: odd fields skipped, bad ones left out", "[stop_reply]") {
  auto r = protocol::parse_stop_reply("T0510:4e51555555550000;thread:65;library:;create:;syscall_entry:zz;");
  REQUIRE(r);
  CHECK(r->gdb_signal == 5);
  CHECK(r->thread.tid == 0x65);
  REQUIRE(r->registers.size() == 1);
  CHECK(r->registers[0].first == 0x10);
  CHECK(r->why == protocol::StopReply::Why::None);  // "zz" is no syscall number
  CHECK_FALSE(protocol::parse_stop_reply(""));
  CHECK_FALSE(protocol::parse_stop_reply("OK"));
  CHECK_FALSE(protocol::parse_stop_reply("T5"));
  CHECK(protocol::parse_stop_reply("W00")->kind == protocol::StopReply::Kind::Exited);
}

TEST_CASE("console output: O and the hex of the text, as GDB prints it", "[stop_reply]") {
  CHECK(protocol::encode_console_output("hi\n") == "O68690a");
  CHECK(protocol::encode_console_output("") == "O");
}
