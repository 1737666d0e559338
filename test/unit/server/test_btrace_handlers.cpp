// The btrace packets against the FakeTarget's ring tracers (btrace.md §4 texts).
#include <catch2/catch.hpp>

#include "protocol/hex.hpp"
#include "test/unit/server/fixture.hpp"

using test_support::HandlerFixture;

namespace {

void set_pc(HandlerFixture& f, std::uint64_t pc) {
  for (int i = 0; i < 8; ++i) {
    f.target.regs[16 * 8 + i] = static_cast<std::uint8_t>(pc >> (8 * i));
  }
}

}  // namespace

TEST_CASE("qSupported announces BTS, not PT", "[btrace]") {
  HandlerFixture f;
  auto reply = f.send("qSupported:multiprocess+");
  CHECK(reply.find("Qbtrace:bts+") != std::string::npos);
  CHECK(reply.find("Qbtrace:off+") != std::string::npos);
  CHECK(reply.find("Qbtrace-conf:bts:size+") != std::string::npos);
  CHECK(reply.find("qXfer:btrace:read+") != std::string::npos);
  CHECK(reply.find("qXfer:btrace-conf:read+") != std::string::npos);
  CHECK(reply.find("Qbtrace:pt+") == std::string::npos);
}

TEST_CASE("enable, configure, read and disable", "[btrace]") {
  HandlerFixture f;
  f.send("Hg64");
  CHECK(f.send("qXfer:btrace-conf:read::0,1000") == "E.Btrace not enabled.");
  CHECK(f.send("qXfer:btrace:read:all:0,1000") == "E.Btrace not enabled.");
  CHECK(f.send("Qbtrace:off") == "E.Branch tracing not enabled.");
  CHECK(f.send("Qbtrace-conf:bts:size=0x1000") == "OK");
  CHECK(f.send("Qbtrace-conf:bts:size=zz") == "E.Bad size value.");
  CHECK(f.send("Qbtrace:bts") == "OK");
  CHECK(f.send("Qbtrace:bts") == "E.Btrace already enabled.");
  CHECK(f.send("Qbtrace:pt").starts_with("E."));
  CHECK(f.send("Qbtrace:xyz") == "E.Bad Qbtrace operation.  Use bts, pt, or off.");
  CHECK(f.send("qXfer:btrace-conf:read::0,1000").find("<bts size=\"0x1000\"") != std::string::npos);

  // Two branches: 0x401005 -> 0x401100, 0x401108 -> 0x401010; now at 0x401014.
  f.target.tracers.at(0x64)->record({0x401005, 0x401100});
  f.target.tracers.at(0x64)->record({0x401108, 0x401010});
  set_pc(f, 0x401014);
  auto delta = f.send("qXfer:btrace:read:delta:0,1000");
  INFO(delta);
  REQUIRE(delta.starts_with("l"));
  auto first = delta.find("<block begin=\"0x401010\" end=\"0x401014\"/>");
  auto second = delta.find("<block begin=\"0x401100\" end=\"0x401108\"/>");
  auto unknown = delta.find("<block begin=\"0x0\" end=\"0x401005\"/>");
  CHECK(first != std::string::npos);
  CHECK(second > first);
  CHECK(unknown > second);
  // Nothing new since: a delta is the one start-unknown block at the current pc.
  auto again = f.send("qXfer:btrace:read:delta:0,1000");
  CHECK(again.find("<block begin=\"0x0\" end=\"0x401014\"/>") != std::string::npos);
  CHECK(f.send("qXfer:btrace:read:bogus:0,1000") == "E.Bad annex.");

  CHECK(f.send("Qbtrace:off") == "OK");
  CHECK(f.target.tracers.empty());
}

TEST_CASE("a delta that lost data is E.Overflow.; chunks come from one snapshot", "[btrace]") {
  HandlerFixture f;
  f.send("Qbtrace-conf:bts:size=0x30");  // two samples
  CHECK(f.send("Qbtrace:bts") == "OK");
  auto* ring = f.target.tracers.at(0x64).get();
  for (std::uint64_t i = 0; i < 5; ++i) {
    ring->record({0x401000 + i * 0x10 + 5, 0x401000 + (i + 1) * 0x10});
  }
  set_pc(f, 0x401052);
  CHECK(f.send("qXfer:btrace:read:delta:0,1000") == "E.Overflow.");
  auto head = f.send("qXfer:btrace:read:all:0,10");
  CHECK(head.starts_with("m"));
  ring->record({0x401055, 0x402000});  // must not change the document being read
  auto rest = f.send("qXfer:btrace:read:all:10,1000");
  CHECK(rest.starts_with("l"));
  CHECK(rest.find("0x402000") == std::string::npos);
}

TEST_CASE("enable errors reach GDB as text; monitor btrace reports", "[btrace]") {
  HandlerFixture f;
  f.target.btrace_available = false;
  CHECK(f.send("Qbtrace:bts") == "E.fake backend unavailable: no such device");
  f.target.btrace_available = true;
  f.send("Hgp64.65");
  CHECK(f.send("Qbtrace:bts") == "OK");
  f.send("qRcmd," + protocol::to_hex("btrace"));
  std::string text;
  for (const auto& line : f.cx.console) {
    text += line;
  }
  CHECK(text.find("thread 101: fake, 0 of 2730 branches kept") != std::string::npos);
  // The backend's failure stays visible: auto says what it passed over, and why.
  CHECK(text.find("auto passed over bts: fake backend unavailable: no such device") !=
        std::string::npos);
  CHECK(text.find("thread 100: not traced") != std::string::npos);
  f.send("Hgp64.99");
  f.state.general_thread = 99;
  CHECK(f.send("Qbtrace:bts") == "E.No such thread.");
}

TEST_CASE("bts:size above --btrace-max-size, GDB's unlimited too, gets the cap", "[btrace]") {
  HandlerFixture f;
  f.options.btrace_max_size = 0x100000;
  f.send("Hg64");
  CHECK(f.send("Qbtrace-conf:bts:size=0xffffffff") == "OK");  // set record btrace bts buffer-size unlimited
  CHECK(f.send("Qbtrace:bts") == "OK");
  CHECK(f.send("qXfer:btrace-conf:read::0,1000").find("<bts size=\"0x100000\" />") != std::string::npos);
  f.send("qRcmd," + protocol::to_hex("btrace"));
  std::string text;
  for (const auto& line : f.cx.console) {
    text += line;
  }
  CHECK(text.find("buffer 1048576 bytes per thread (at most 1048576)") != std::string::npos);
  CHECK(text.find("0 of 43690 branches kept") != std::string::npos);
  CHECK(f.send("Qbtrace-conf:bts:size=0x2000") == "OK");  // below the cap: as asked
  CHECK(f.server.btrace_config.bts_size == 0x2000);
}
