// Packet-level robustness with a raw RSP client (acks on, no GDB): malformed input gets an
// error reply or a NAK and the session goes on. These tests are written to Hindsight's spec
// (STYLE.md §5: "client input never kills us; a malformed packet gets an error reply").
//
// Tagged [xfail-gdbserver]: expected to FAIL against GNU gdbserver 13, which answers the first
// malformed `m` with E01 but then exits on the next packet ("gdbserver: Invalid hex digit 122",
// "Invalid hex digit 0" after `m1234`), and which does not bound its packet buffer.
// `e2e_tests '~[xfail-gdbserver]'` runs the rest.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <thread>

#include "test/e2e/gdb_session.hpp"
#include "test/e2e/rsp_client.hpp"

using Catch::Matchers::StartsWith;

namespace {

// The session still answers: `?` gives a stop reply and `qC` the current thread.
void require_session_alive(e2e::RspClient& c) {
  auto stop = c.request("?");
  REQUIRE(stop.has_value());
  CHECK((StartsWith("T").match(*stop) || StartsWith("S").match(*stop)));
  auto qc = c.request("qC");
  REQUIRE(qc.has_value());
  CHECK_THAT(*qc, StartsWith("QC"));
}

bool is_error_reply(const std::string& reply) { return reply.size() >= 2 && reply[0] == 'E'; }

}  // namespace

TEST_CASE("raw RSP: a well-formed session start", "[e2e][rsp]") {
  e2e::Server server({.program = "simple"});
  e2e::RspClient c(server.port());
  auto sup = c.request("qSupported:multiprocess+;swbreak+;hwbreak+;vContSupported+");
  REQUIRE(sup.has_value());
  CHECK_THAT(*sup, Catch::Matchers::Contains("PacketSize="));
  require_session_alive(c);
}

TEST_CASE("raw RSP: a bad checksum gets '-'", "[e2e][rsp]") {
  e2e::Server server({.program = "simple"});
  e2e::RspClient c(server.port());
  REQUIRE(c.send_raw("$?#00"));  // '?' sums to 3f
  CHECK(c.read_ack() == '-');
  require_session_alive(c);
}

TEST_CASE("raw RSP: malformed hex in m gets an E reply", "[e2e][rsp][xfail-gdbserver]") {
  e2e::Server server({.program = "simple"});
  e2e::RspClient c(server.port());
  for (const char* bad : {"mzz,4", "m1000,zz", "m-1,4"}) {
    INFO("packet: " << bad);
    auto reply = c.request(bad);
    REQUIRE(reply.has_value());
    CHECK(is_error_reply(*reply));
    require_session_alive(c);
  }
}

TEST_CASE("raw RSP: a truncated m packet gets an E reply", "[e2e][rsp][xfail-gdbserver]") {
  e2e::Server server({.program = "simple"});
  e2e::RspClient c(server.port());
  for (const char* bad : {"m1234", "m1234,", "m"}) {
    INFO("packet: " << bad);
    auto reply = c.request(bad);
    REQUIRE(reply.has_value());
    CHECK(is_error_reply(*reply));
    require_session_alive(c);
  }
}

// Our spec: a packet longer than 0x20000 bytes gets an E reply (or, at worst, is dropped) and
// the session continues. GNU gdbserver 13 does not bound its input buffer (PBUFSIZ, 0x47ff)
// in getpkt, so against it this test may fail or see the server die: tagged xfail-gdbserver.
TEST_CASE("raw RSP: an overlong packet is refused and the session goes on",
          "[e2e][rsp][xfail-gdbserver]") {
  e2e::Server server({.program = "simple"});
  e2e::RspClient c(server.port());
  // qSupported would be answered with PacketSize=... if the server swallowed the whole packet.
  const std::string payload = "qSupported:" + std::string(0x20100, 'a');
  REQUIRE(c.send_packet(payload));
  auto ack = c.read_ack(std::chrono::milliseconds(1000));
  INFO("ack: " << (ack ? std::string(1, *ack) : std::string("none")));
  if (ack == '+') {
    auto reply = c.read_packet(std::chrono::milliseconds(1000));
    INFO("reply: " << (reply ? reply->substr(0, 80) : std::string("none")));
    if (reply) {
      CHECK(is_error_reply(*reply));
    }
  }
  REQUIRE(!c.closed());
  require_session_alive(c);
}

TEST_CASE("raw RSP: 0x03 stops a running program with T02, and it can go on", "[e2e][rsp]") {
  e2e::Server server({.program = "sleeper"});
  e2e::RspClient c(server.port());
  REQUIRE(c.send_packet("vCont;c"));
  CHECK_FALSE(c.read_packet(std::chrono::milliseconds(200)).has_value());  // still running
  REQUIRE(c.send_raw("\x03"));
  auto stop = c.read_packet(std::chrono::milliseconds(3000));
  REQUIRE(stop.has_value());
  CHECK_THAT(*stop, StartsWith("T02"));
  // Running again and interrupting again works the same way.
  REQUIRE(c.send_packet("vCont;c"));
  REQUIRE(c.send_raw("\x03"));
  stop = c.read_packet(std::chrono::milliseconds(3000));
  REQUIRE(stop.has_value());
  CHECK_THAT(*stop, StartsWith("T02"));
  require_session_alive(c);
}

TEST_CASE("raw RSP: 0x03 stops every thread of a multi-threaded program", "[e2e][rsp][threads]") {
  e2e::Server server({.program = "mt", .args = {"many", "20"}});
  e2e::RspClient c(server.port());
  REQUIRE(c.request("qSupported:multiprocess+").has_value());
  REQUIRE(c.send_packet("vCont;c"));
  REQUIRE(c.read_ack() == '+');
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // let the threads start
  REQUIRE(c.send_raw("\x03"));
  auto stop = c.read_packet(std::chrono::milliseconds(3000));
  REQUIRE(stop.has_value());
  CHECK_THAT(*stop, StartsWith("T02"));
  // thread:pPID.TID; -> every task of PID is in a ptrace stop.
  auto at = stop->find("thread:p");
  REQUIRE(at != std::string::npos);
  pid_t pid = static_cast<pid_t>(std::stol(stop->substr(at + 8), nullptr, 16));
  int tasks = 0;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task")) {
    std::ifstream stat(entry.path() / "stat");
    std::string line;
    std::getline(stat, line);
    auto close = line.rfind(')');
    REQUIRE(close != std::string::npos);
    CHECK(line.substr(close + 2, 1) == "t");
    ++tasks;
  }
  CHECK(tasks == 21);
  auto threads = c.request("qXfer:threads:read::0,10000");
  REQUIRE(threads.has_value());
  CHECK(std::count(threads->begin(), threads->end(), '\n') >= 22);
}

TEST_CASE("raw RSP: 0x03 stops a thread that is being branch-traced; its history is there",
          "[e2e][rsp][btrace]") {
  e2e::Server server({.program = "sleeper"});
  e2e::RspClient c(server.port());
  REQUIRE(c.request("qSupported:multiprocess+;swbreak+").has_value());
  auto stop = c.request("?");  // selects the reporting thread, as GDB assumes
  REQUIRE(stop.has_value());
  REQUIRE(c.request("Qbtrace:bts") == std::optional<std::string>("OK"));
  REQUIRE(c.send_packet("vCont;c"));
  REQUIRE(c.read_ack() == '+');
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  REQUIRE(c.send_raw("\x03"));
  stop = c.read_packet(std::chrono::milliseconds(3000));
  REQUIRE(stop.has_value());
  CHECK_THAT(*stop, StartsWith("T02"));
  auto trace = c.request("qXfer:btrace:read:all:0,ffff");
  REQUIRE(trace.has_value());
  CHECK_THAT(*trace, StartsWith("m") || StartsWith("l"));
  CHECK(std::count(trace->begin(), trace->end(), '\n') > 10);  // many blocks recorded
  REQUIRE(c.request("Qbtrace:off") == std::optional<std::string>("OK"));
  require_session_alive(c);
}
