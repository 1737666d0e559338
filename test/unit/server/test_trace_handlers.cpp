// The tracepoint packets against a FakeTarget's experiment: defining (GDB 13.1's own packets),
// running, the status gdbserver gives, uploading to a GDB that connects later, and looking
// at frames (registers, memory, state variables, unavailable parts) with QTFrame.
#include <catch2/catch.hpp>

#include "fixture.hpp"

using test_support::FakeTarget;
using test_support::HandlerFixture;
using tracer::Addr;
using tracer::Bytes;

namespace {

// A stopped thread whose registers are the fake's, and whose memory is the fake's.
struct FakeThread : tracer::trace::Thread {
  FakeTarget& target;
  explicit FakeThread(FakeTarget& t) : target(t) {}
  base::Result<std::uint64_t> reg(int regno) override {
    auto b = target.read_register(101, regno);
    if (!b) {
      return b.error();
    }
    std::uint64_t v = 0;
    for (std::size_t i = 0; i < 8; ++i) {
      v |= std::uint64_t{(*b)[i]} << (8 * i);
    }
    return v;
  }
  base::Result<std::uint64_t> read(Addr addr, std::size_t len) override {
    auto b = target.read_memory(addr, len);
    if (!b || b->size() != len) {
      return base::make_error(base::Errc::invalid, "unreadable");
    }
    std::uint64_t v = 0;
    for (std::size_t i = 0; i < len; ++i) {
      v |= std::uint64_t{(*b)[i]} << (8 * i);
    }
    return v;
  }
  void print(std::string_view) override {}
  base::Result<Bytes> registers() override { return target.read_registers(101); }
  base::Result<Bytes> read_memory(Addr addr, std::size_t len) override { return target.read_memory(addr, len); }
};

}  // namespace

TEST_CASE("tracepoints: announced as gdbserver does, and absent from a target that cannot", "[handlers][trace]") {
  HandlerFixture f;
  const std::string features = f.send("qSupported:multiprocess+");
  for (const char* name : {";ConditionalTracepoints+", ";TracepointSource+", ";TraceStateVariables+",
                           ";EnableDisableTracepoints+", ";QTBuffer:size+", ";DisconnectedTracing+", ";InstallInTrace+",
                           ";tracenz+", ";qXfer:traceframe-info:read+", ";FastTracepoints+"}) {
    CHECK(features.find(name) != std::string::npos);
  }
  CHECK(f.send("qTStatus") ==
        "T0;tnotrun:0;tframes:0;tcreated:0;tfree:500000;tsize:500000;circular:0;disconn:0;starttime:0;stoptime:0;"
        "username:;notes::");
  HandlerFixture without;
  without.target.caps.tracepoints = false;
  without.target.caps.fast_tracepoints = false;
  CHECK(without.send("qSupported:multiprocess+").find("Tracepoints") == std::string::npos);
  CHECK(without.send("qTStatus").empty());
  CHECK(without.send("qTMinFTPILen").empty());
  CHECK(without.send("QTinit").empty());
}

TEST_CASE("fast tracepoints: qTMinFTPILen is 0 until the in-process agent is loaded, then 5", "[handlers][trace]") {
  HandlerFixture f;
  CHECK(f.send("qTMinFTPILen") == "0");
  f.target.fast_min_length = 5;
  CHECK(f.send("qTMinFTPILen") == "5");
  // `set agent off`: fast tracepoints are collected by trap; on again, by the agent.
  CHECK(f.target.trace_experiment.use_agent);
  CHECK(f.send("QAgent:0") == "OK");
  CHECK_FALSE(f.target.trace_experiment.use_agent);
  CHECK(f.send("QTinit") == "OK");
  CHECK_FALSE(f.target.trace_experiment.use_agent);  // (a setting, not part of a definition)
  CHECK(f.send("QAgent:1") == "OK");
  CHECK(f.target.trace_experiment.use_agent);
  CHECK(f.send("QAgent:2") == "E01");
}

TEST_CASE("tracepoints: GDB 13.1's definition packets, a run, and what GDB reads of it", "[handlers][trace]") {
  HandlerFixture f;
  f.send("qSupported:multiprocess+");
  // What GDB 13.1 sent for `trace *0x400010 if x > 1` with `passcount 2`, `collect $regs, *(int*)0x400100`,
  // `teval $count = $count + 1` ($count: variable 2 starting at 5).
  CHECK(f.send("QTinit") == "OK");
  CHECK(f.send("QTDV:1:0:1:74726163655f74696d657374616d70") == "OK");
  CHECK(f.send("QTDV:2:5:0:636f756e74") == "OK");
  CHECK(f.send("QTDP:1:400010:E:0:2:X3,220127-") == "OK");  // condition: const8 1, end
  CHECK(f.send("QTDP:-1:400010:R1ffff-") == "OK");
  CHECK(f.send("QTDP:-1:400010:M-1,400100,4-") == "OK");
  CHECK(f.send("QTDP:-1:400010:XC,2c000222010216402d000227") == "OK");
  CHECK(f.send("QTDPsrc:1:400010:at:0:9:2a30783430303031") == "OK");  // "*0x400010", in two pieces
  CHECK(f.send("QTDPsrc:1:400010:at:8:9:30") == "OK");
  CHECK(f.send("QTDP:-9:400010:R1") == "E01");  // actions of a tracepoint never defined
  CHECK(f.send("QTDP:1:400010:E:0:0") == "E01");  // defined twice
  CHECK(f.send("QTBuffer:circular:1") == "OK");
  CHECK(f.send("QTBuffer:size:2000") == "OK");
  CHECK(f.send("QTNotes:user:6d65;notes:6e6f746573;") == "OK");
  CHECK(f.send("QTro:400000,400fff") == "OK");
  CHECK(f.send("qTV:2") == "U");  // before any run
  CHECK(f.send("QTStart") == "OK");
  CHECK(f.target.placed_sites == std::vector<Addr>{0x400010});
  CHECK(f.send("QTBuffer:size:4000") == "E01");  // not during a run

  FakeThread thread(f.target);
  f.target.regs[16 * 8] = 0x10;  // pc
  f.target.regs[16 * 8 + 2] = 0x40;
  CHECK_FALSE(f.target.trace_experiment.hit(0x400010, thread, 1000).stop_run);
  CHECK(f.target.trace_experiment.hit(0x400010, thread, 2000).stop_run);  // the pass count
  (void)f.target.place_tracepoints();
  const std::string status = f.send("qTStatus");
  CHECK(status.starts_with("T0;tpasscount:1;tframes:2;tcreated:2;"));
  CHECK(status.find(";tsize:2000;circular:1;") != std::string::npos);
  CHECK(status.ends_with(";username:6d65;notes:6e6f746573:"));
  CHECK(f.send("qTP:1:400010").starts_with("V2:"));
  CHECK(f.send("qTP:3:400010") == "E01");
  CHECK(f.send("qTV:2") == "V7");

  // Looking at frames.
  CHECK(f.send("QTFrame:0") == "F0T1");
  CHECK(f.send("qTV:2") == "U");  // the frame did not collect it (no tracev)
  CHECK(f.send("g").substr(16 * 16, 16) == "1000400000000000");
  CHECK(f.send("p10") == "1000400000000000");
  CHECK(f.send("m400100,4") == "00070e15");  // collected
  CHECK(f.send("m400104,4") == "1c232a31");  // not collected, but read-only (QTro): from the program
  CHECK(f.send("m410000,4") == "E01");  // neither
  CHECK(f.send("qXfer:traceframe-info:read::0,fff") == "l<traceframe-info>\n<memory start=\"0x400100\" length=\"0x4\"/>\n</traceframe-info>\n");
  CHECK(f.send("G00") == "E01");
  CHECK(f.send("M400100,1:00") == "E01");
  CHECK(f.send("QTFrame:pc:400010") == "F1T1");  // the next after frame 0
  CHECK(f.send("QTFrame:pc:400010") == "F-1");
  CHECK(f.send("QTFrame:tdp:1") == "F-1");
  CHECK(f.send("QTFrame:ffffffff") == "OK");
  CHECK(f.send("QTFrame:range:400000:400020") == "F0T1");
  CHECK(f.send("QTFrame:outside:400000:400020") == "F-1");
  CHECK(f.send("QTFrame:5") == "F-1");
  CHECK(f.send("QTFrame:ffffffff") == "OK");
  CHECK(f.send("m400100,4") == "00070e15");  // the live program again
  CHECK(f.send("qXfer:traceframe-info:read::0,fff") == "E01");
}

TEST_CASE("tracepoints: a GDB that connects during a run gets the definitions and variables back", "[handlers][trace]") {
  HandlerFixture f;
  f.send("QTinit");
  f.send("QTDV:2:fffffffffffffffb:0:636f756e74");
  f.send("QTDP:3:400020:D:2:0:X3,220127-");
  f.send("QTDP:-3:400020:R1ff-");
  f.send("QTDP:-3:400020:SM6,fffffffffffffff0,8-");
  f.send("QTDP:-3:400020:X3,220127");  // after an S packet: while-stepping too (GDB marks the first)
  f.send("QTDPsrc:3:400020:cmd:0:3:656e64");
  CHECK(f.send("qTfP") == "T3:400020:D:2:0:X3,220127");
  CHECK(f.send("qTsP") == "A3:400020:R1ff");
  CHECK(f.send("qTsP") == "S3:400020:M6,fffffffffffffff0,8");
  CHECK(f.send("qTsP") == "S3:400020:X3,220127");
  CHECK(f.send("qTsP") == "Z3:400020:cmd:0:3:656e64");
  CHECK(f.send("qTsP") == "l");
  CHECK(f.send("qTsP") == "l");
  // Newest first, as gdbserver; the target's own $trace_timestamp (it outlives QTinit) last.
  CHECK(f.send("qTfV") == "2:fffffffffffffffb:0:636f756e74");
  CHECK(f.send("qTsV") == "1:0:1:74726163655f74696d657374616d70");
  CHECK(f.send("qTsV") == "l");
  // Enabling during a run places its int3; disabling takes it out.
  CHECK(f.send("QTStart") == "OK");
  CHECK(f.target.placed_sites.empty());
  CHECK(f.send("QTEnable:3:400020") == "OK");
  CHECK(f.target.placed_sites == std::vector<Addr>{0x400020});
  CHECK(f.send("QTDisable:3:400020") == "OK");
  CHECK(f.target.placed_sites.empty());
  CHECK(f.send("QTEnable:4:400020") == "E01");
  CHECK(f.send("QTDisconnected:1") == "OK");
  CHECK(f.send("QTNotes:tstop:6279;") == "OK");
  CHECK(f.send("QTStop") == "OK");
  CHECK(f.send("qTStatus").starts_with("T0;tstop:6279:0;tframes:0;tcreated:0;"));
  CHECK(f.send("qTStatus").find(";disconn:1;") != std::string::npos);
  CHECK(f.send("qTBuffer:0,10") == "l");  // no frames
  CHECK(f.send("qTBuffer:1,10") == "E01");
}

TEST_CASE("tracepoints: a detach ends the run and takes its int3s out", "[handlers][trace]") {
  HandlerFixture f;
  f.send("QTinit");
  f.send("QTDP:1:400010:E:0:0");
  REQUIRE(f.send("QTStart") == "OK");
  CHECK(f.target.placed_sites == std::vector<Addr>{0x400010});
  CHECK(f.send("D") == "OK");
  CHECK(f.target.placed_sites.empty());
  CHECK(f.send("qTStatus").starts_with("T0;tstop::0;"));
}
