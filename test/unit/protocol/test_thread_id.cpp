// Thread id parsing and formatting.
#include <catch2/catch.hpp>

#include "protocol/thread_id.hpp"

using protocol::ThreadId;

TEST_CASE("parse_thread_id accepts every form GDB sends", "[thread_id]") {
  struct Case {
    const char* text;
    ThreadId id;
  };
  const Case cases[] = {
      {"p1a.1b", {0x1a, 0x1b}},
      {"p1a", {0x1a, ThreadId::kAll}},
      {"p1a.-1", {0x1a, ThreadId::kAll}},
      {"p-1", {ThreadId::kAll, ThreadId::kAll}},
      {"p-1.-1", {ThreadId::kAll, ThreadId::kAll}},
      {"p-1.0", {ThreadId::kAll, ThreadId::kAny}},
      {"p0.0", {ThreadId::kAny, ThreadId::kAny}},
      {"p39d5.39d5", {0x39d5, 0x39d5}},
      {"1b", {ThreadId::kAny, 0x1b}},
      {"-1", {ThreadId::kAny, ThreadId::kAll}},
      {"0", {ThreadId::kAny, ThreadId::kAny}},
  };
  for (const auto& c : cases) {
    INFO(c.text);
    auto r = protocol::parse_thread_id(c.text);
    REQUIRE(r.ok());
    CHECK(r->pid == c.id.pid);
    CHECK(r->tid == c.id.tid);
  }
}

TEST_CASE("parse_thread_id rejects garbage", "[thread_id]") {
  for (const char* bad : {"", "p", "p1.", "pz.1", "p1.z", "p-1.-2", "p-2", "-2", "p.1", "p1.2.3", "1.2",
                          "x", "p1.1x", "p-1.5", "--1", "p11111111111111111.1", " 1"}) {
    INFO(bad);
    auto r = protocol::parse_thread_id(bad);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().code == base::Errc::malformed);
  }
}

TEST_CASE("format_thread_id", "[thread_id]") {
  CHECK(protocol::format_thread_id({0x1a, 0x1b}, true) == "p1a.1b");
  CHECK(protocol::format_thread_id({0x1a, 0x1b}, false) == "1b");
  CHECK(protocol::format_thread_id({0x1a, ThreadId::kAll}, true) == "p1a.-1");
  CHECK(protocol::format_thread_id({ThreadId::kAll, ThreadId::kAll}, true) == "p-1.-1");
  CHECK(protocol::format_thread_id({ThreadId::kAny, ThreadId::kAll}, false) == "-1");
  CHECK(protocol::format_thread_id({0, 0}, false) == "0");
  for (ThreadId id : {ThreadId{0x39d5, 0x39d5}, ThreadId{1, ThreadId::kAll}, ThreadId{0, 0}}) {
    CHECK(*protocol::parse_thread_id(protocol::format_thread_id(id, true)) == id);
  }
}
