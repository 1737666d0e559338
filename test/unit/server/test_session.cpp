// The session over raw bytes: acks, no-ack mode, retransmission, interrupts, stop replies.
#include <catch2/catch.hpp>

#include <csignal>

#include "protocol/framing.hpp"
#include "protocol/hex.hpp"
#include "protocol/stop_reply.hpp"
#include "server/session.hpp"
#include "test/unit/server/fixture.hpp"

namespace {

struct SessionFixture : test_support::HandlerFixture {
  std::string out;
  server::Session session{cx, [this](std::string_view b) { out.append(b); }};

  std::string exchange(std::string_view bytes) {
    out.clear();
    session.on_bytes(bytes);
    return out;
  }
};

}  // namespace

TEST_CASE("session acks packets and frames replies", "[session]") {
  SessionFixture f;
  CHECK(f.exchange(protocol::encode_packet("qC")) == "+" + protocol::encode_packet("QC64"));
  CHECK(f.exchange("$qC#00") == "-");                      // bad checksum
  CHECK(f.exchange("-") == protocol::encode_packet("QC64"));  // retransmit on '-'
  CHECK(f.exchange(protocol::encode_packet("QStartNoAckMode")) == "+" + protocol::encode_packet("OK"));
  CHECK(f.exchange("+" + protocol::encode_packet("qC")) == protocol::encode_packet("QC64"));
}

TEST_CASE("session survives garbage and overlong packets", "[session]") {
  SessionFixture f;
  CHECK(f.exchange("garbage\x7f") == "");
  std::string huge = "$m" + std::string(protocol::kMaxPacketSize + 10, '1') + "#00";
  auto reply = f.exchange(huge);
  CHECK(reply.find("$E") != std::string::npos);
  CHECK(f.exchange(protocol::encode_packet("qC")) == "+" + protocol::encode_packet("QC64"));
}

TEST_CASE("session reports a stop after vCont, and 0x03 interrupts", "[session]") {
  SessionFixture f;
  f.exchange(protocol::encode_packet("QStartNoAckMode"));
  CHECK(f.exchange(protocol::encode_packet("vCont;c")) == "");
  CHECK(f.session.waiting_for_stop());
  CHECK(f.exchange("\x03") == "");
  CHECK(f.target.interrupts == 1);
  f.out.clear();
  f.session.on_target_event();
  CHECK(f.out.starts_with("$T02"));
  CHECK_FALSE(f.session.waiting_for_stop());

  // A stop already pending is reported as soon as GDB resumes.
  tracer::StopEvent ev;
  ev.pid = 100;
  ev.tid = 101;
  ev.signal = 11;
  f.target.pending.push_back(ev);
  auto reply = f.exchange(protocol::encode_packet("vCont;c"));
  CHECK(reply.starts_with("$T0b"));
  CHECK(f.state.general_thread == 101);
}

TEST_CASE("after the process exits (not extended) the session goes on until GDB closes it", "[session]") {
  SessionFixture f;
  f.exchange(protocol::encode_packet("QStartNoAckMode"));
  tracer::StopEvent ev;
  ev.pid = 100;
  ev.reason = tracer::StopReason::Exited;
  ev.status = 7;
  f.target.pending.push_back(ev);
  CHECK(f.exchange(protocol::encode_packet("vCont;c")) == protocol::encode_packet("W07"));
  CHECK_FALSE(f.session.ended());  // GDB 16 still reads files (vFile) then, as from gdbserver
  CHECK(f.exchange(protocol::encode_packet("vFile:fstat:3")) == protocol::encode_packet("F-1,9"));
  REQUIRE_FALSE(f.notices.empty());
  CHECK(f.notices.back().find("Child exited with status 7") != std::string::npos);
}

TEST_CASE("a program killed by a signal is said as gdbserver says it", "[session]") {
  SessionFixture f;
  f.exchange(protocol::encode_packet("QStartNoAckMode"));
  tracer::StopEvent ev;
  ev.pid = 100;
  ev.reason = tracer::StopReason::Killed;
  ev.signal = SIGABRT;
  f.target.pending.push_back(ev);
  CHECK(f.exchange(protocol::encode_packet("vCont;c")) == protocol::encode_packet("X06"));
  REQUIRE_FALSE(f.notices.empty());
  CHECK(f.notices.back() == "\nChild terminated with signal = 0x6 (SIGABRT)");
}

TEST_CASE("monitor output arrives as O packets before OK", "[session]") {
  SessionFixture f;
  f.exchange(protocol::encode_packet("QStartNoAckMode"));
  auto reply = f.exchange(protocol::encode_packet("qRcmd," + protocol::to_hex("help")));
  CHECK(reply.starts_with("$O"));
  CHECK(reply.ends_with(protocol::encode_packet("OK")));
}

TEST_CASE("console output reaches GDB only while it waits for an all-stop stop reply", "[session]") {
  SessionFixture f;
  f.exchange(protocol::encode_packet("QStartNoAckMode"));
  f.out.clear();
  CHECK_FALSE(f.session.console_output("early\n"));  // nothing runs: GDB reads no O now
  CHECK(f.out.empty());
  REQUIRE(f.exchange(protocol::encode_packet("vCont;c")) == "");
  CHECK(f.session.console_output("hindsight: soft has recorded\n"));
  CHECK(f.out == protocol::encode_packet(protocol::encode_console_output("hindsight: soft has recorded\n")));
  f.session.on_target_event();  // no stop yet: GDB still waits
  f.exchange("\x03");
  f.out.clear();
  f.session.on_target_event();
  REQUIRE(f.out.starts_with("$T02"));
  CHECK_FALSE(f.session.console_output("late\n"));  // the stop reply went: GDB reads no O now

  SessionFixture ns;  // non-stop: O is no reply of that mode
  ns.exchange(protocol::encode_packet("QStartNoAckMode"));
  REQUIRE(ns.exchange(protocol::encode_packet("QNonStop:1")) == protocol::encode_packet("OK"));
  REQUIRE(ns.exchange(protocol::encode_packet("vCont;c")) == protocol::encode_packet("OK"));
  ns.out.clear();
  CHECK_FALSE(ns.session.console_output("hindsight: soft has recorded\n"));
  CHECK(ns.out.empty());
}

TEST_CASE("a 0x03 between a stop and the next resume stops that resume at once", "[session]") {
  SessionFixture f;
  f.exchange(protocol::encode_packet("QStartNoAckMode"));
  CHECK(f.exchange("\x03") == "");  // nothing runs: kept for later
  CHECK(f.target.interrupts == 0);
  CHECK(f.exchange(protocol::encode_packet("vCont;s")).starts_with("$T02"));
  CHECK(f.target.interrupts == 1);
  CHECK_FALSE(f.session.waiting_for_stop());
}

TEST_CASE("a connection that ends closes the files GDB opened and forgets setfs", "[session]") {
  SessionFixture f;
  f.exchange(protocol::encode_packet("QStartNoAckMode"));
  CHECK(f.exchange(protocol::encode_packet("vFile:setfs:64")) == protocol::encode_packet("F0"));
  CHECK(f.exchange(protocol::encode_packet("vFile:open:" + protocol::to_hex("/fake/prog") + ",0,0")) ==
        protocol::encode_packet("F3"));
  REQUIRE(f.host.open_fds.size() == 1);
  f.session.on_disconnect();
  CHECK(f.host.open_fds.empty());
  CHECK(f.host.setfs_pid == 0);
}

TEST_CASE("non-stop: a wildcard resume leaves alone the threads and fork children of stops GDB "
          "has not pulled yet", "[session]") {
  SessionFixture f;
  f.exchange(protocol::encode_packet("QStartNoAckMode"));
  REQUIRE(f.exchange(protocol::encode_packet("QNonStop:1")) == protocol::encode_packet("OK"));
  REQUIRE(f.exchange(protocol::encode_packet("vCont;c")) == protocol::encode_packet("OK"));
  tracer::StopEvent fork;
  fork.reason = tracer::StopReason::Fork;
  fork.pid = 100;
  fork.tid = 101;
  fork.signal = 5;
  fork.child_pid = 200;
  f.target.pending.push_back(fork);
  f.out.clear();
  f.session.on_target_event();
  INFO(f.out);
  REQUIRE(f.out.starts_with("%Stop:T05"));
  // GDB resumes everything with the notification still on its way (as GDB does when it
  // passes another thread's signal): not the forking thread, not its child.
  REQUIRE(f.exchange(protocol::encode_packet("vCont;C14:p64.66;c")) == protocol::encode_packet("OK"));
  REQUIRE_FALSE(f.target.resumes.empty());
  CHECK(f.target.resumes.back().unannounced_threads == std::set<tracer::Tid>{101});
  CHECK(f.target.resumes.back().unannounced_children == std::set<tracer::Pid>{200});
  // Pulled: the next wildcard is for everyone.
  CHECK(f.exchange(protocol::encode_packet("vStopped")) == protocol::encode_packet("OK"));
  REQUIRE(f.exchange(protocol::encode_packet("vCont;c")) == protocol::encode_packet("OK"));
  CHECK(f.target.resumes.back().unannounced_threads.empty());
  CHECK(f.target.resumes.back().unannounced_children.empty());
}

TEST_CASE("non-stop: a wildcard resume leaves alone the new thread of a clone GDB has not pulled yet",
          "[session]") {
  SessionFixture f;
  f.exchange(protocol::encode_packet("QStartNoAckMode"));
  REQUIRE(f.exchange(protocol::encode_packet("QNonStop:1")) == protocol::encode_packet("OK"));
  REQUIRE(f.exchange(protocol::encode_packet("vCont;c")) == protocol::encode_packet("OK"));
  tracer::StopEvent clone{tracer::StopReason::Clone, 100, 101, 5};
  clone.child_tid = 102;
  f.target.pending.push_back(clone);
  f.out.clear();
  f.session.on_target_event();
  REQUIRE(f.out.starts_with("%Stop:T05clone:"));
  REQUIRE(f.exchange(protocol::encode_packet("vCont;c")) == protocol::encode_packet("OK"));
  CHECK(f.target.resumes.back().unannounced_threads == std::set<tracer::Tid>{101, 102});
}
