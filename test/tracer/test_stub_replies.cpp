// Valgrind's gdbserver's answers, read (tracer/valgrind/stub_replies): stop replies and the
// register sizes of its target description, odd ones included.
#include <catch2/catch.hpp>

#include <csignal>
#include <map>

#include "tracer/valgrind/stub_replies.hpp"

using arch::x86::Isa;
using tracer::StopReason;
using tracer::valgrind::description_isa;
using tracer::valgrind::parse_stop_reply;
using tracer::valgrind::register_sizes;

TEST_CASE("Valgrind stop replies: thread, pc, syscalls, exits; bad fields left out", "[valgrind]") {
  auto stop = parse_stop_reply("T0510:4e51555555550000;thread:p64.65;", 100, 100, Isa::Amd64);
  CHECK(stop.event.signal == SIGTRAP);
  CHECK(stop.event.tid == 0x65);
  CHECK(stop.thread == std::optional<tracer::Tid>(0x65));
  CHECK(stop.pc == 0x55555555514eull);
  auto sys = parse_stop_reply("T05syscall_entry:3b;thread:65;", 100, 101, Isa::Amd64);
  CHECK(sys.event.reason == StopReason::SyscallEntry);
  CHECK(sys.event.syscall == 0x3b);
  auto bad = parse_stop_reply("T05syscall_return:zz;thread:-5;10:12;", 100, 101, Isa::Amd64);
  CHECK(bad.event.reason == StopReason::Signal);  // not a syscall stop it could read
  CHECK(bad.event.tid == 101);
  CHECK_FALSE(bad.thread.has_value());
  CHECK(bad.pc == 0);
  auto exited = parse_stop_reply("W07", 100, 100, Isa::Amd64);
  CHECK(exited.event.reason == StopReason::Exited);
  CHECK(exited.event.status == 7);
  auto killed = parse_stop_reply("X09", 100, 100, Isa::Amd64);
  CHECK(killed.event.reason == StopReason::Killed);
  CHECK(killed.event.signal == SIGKILL);
  CHECK(parse_stop_reply("", 100, 0, Isa::Amd64).event.tid == 100);
  CHECK(parse_stop_reply("T", 100, 0, Isa::Amd64).event.signal == SIGTRAP);
}

TEST_CASE("Valgrind stop replies of an i386 program: eip is register 8, four bytes", "[valgrind][i386]") {
  // What Valgrind's x86 gdbserver expedites: ebp, esp, eip.
  auto stop = parse_stop_reply("T0505:d8f3ffbf;04:c0f3ffbf;08:9a840408;thread:p64.65;", 100, 100, Isa::I386);
  CHECK(stop.pc == 0x0804849aull);
  // The same reply read as amd64 finds no pc: register 16 is not there, 8 is r8.
  CHECK(parse_stop_reply("T0508:9a840408;thread:65;", 100, 100, Isa::Amd64).pc == 0);
}

TEST_CASE("Valgrind's target description names its instruction set", "[valgrind][i386]") {
  CHECK(description_isa("<target><architecture>i386</architecture><osabi>GNU/Linux</osabi>") == Isa::I386);
  CHECK(description_isa("<target><architecture>i386:x86-64</architecture>") == Isa::Amd64);
  CHECK(description_isa("<target>") == Isa::Amd64);
}

TEST_CASE("Valgrind's target description: sizes in order; an absurd size is an error", "[valgrind]") {
  std::map<std::string, std::string> docs = {
      {"target.xml", R"(<target><xi:include href="core.xml"/><xi:include href="sse.xml"/></target>)"},
      {"core.xml", R"(<feature><reg name="rax" bitsize="64"/><reg name="eflags" bitsize="32" type="i386_eflags"/></feature>)"},
      {"sse.xml", R"(<feature><reg name="xmm0" bitsize="128"/></feature>)"},
  };
  auto fetch = [&](const std::string& annex) -> base::Result<std::string> {
    auto it = docs.find(annex);
    if (it == docs.end()) {
      return base::make_error(base::Errc::invalid, "no " + annex);
    }
    return it->second;
  };
  auto sizes = register_sizes(fetch);
  REQUIRE(sizes.ok());
  CHECK(*sizes == std::vector<std::size_t>{8, 4, 16});
  for (const char* absurd : {"99999999999999999999999", "0", "12", "65536"}) {
    INFO("bitsize " << absurd);
    docs["sse.xml"] = std::string(R"(<feature><reg name="x" bitsize=")") + absurd + R"("/></feature>)";
    CHECK_FALSE(register_sizes(fetch).ok());
  }
  docs.erase("sse.xml");
  CHECK_FALSE(register_sizes(fetch).ok());
}
