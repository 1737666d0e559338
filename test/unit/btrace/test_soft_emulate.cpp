// SoftEmulate without a process: where it plants, what it performs and records, and where it
// admits a gap. Code is hand-assembled at 0x1000:
//   1000: mov %rsp,%rbp      48 89 e5
//   1003: syscall            0f 05        (runs natively inside a run)
//   1005: call 0x1020        e8 16 00 00 00
//   100a: jne  0x1000        75 f4
//   100c: ret                c3
//   1020: nop                90
//   1021: ret                c3
#include <catch2/catch.hpp>

#include "test/support/fake_collector_host.hpp"
#include "tracer/btrace/history_ring.hpp"
#include "tracer/btrace/soft_emulate.hpp"

using tracer::BranchSample;
using tracer::BtraceRead;
using tracer::SiteVerdict;
namespace ax = arch::x86;

namespace {

constexpr tracer::Tid kTid = 7;
constexpr tracer::Addr kStack = 0x8000;

struct Fixture {
  test_support::FakeCollectorHost host;
  tracer::SoftEmulateCollector c;

  explicit Fixture(tracer::BtraceScope scope = {}) : c(std::move(scope)) {
    host.load(0x1000, {0x48, 0x89, 0xe5, 0x0f, 0x05, 0xe8, 0x16, 0x00, 0x00, 0x00, 0x75, 0xf4, 0xc3});
    host.load(0x1020, {0x90, 0xc3});
    host.load(kStack - 64, tracer::Bytes(128, 0));
    host.regs[kTid][ax::kRsp] = kStack;
    host.regs[kTid][ax::kEflags] = 0x202;  // ZF clear: jne taken
    REQUIRE(c.start(kTid, {}).ok());
  }
  void at(tracer::Addr pc) { host.regs[kTid][ax::kRip] = pc; }
  std::vector<tracer::BtraceBlock> delta(tracer::Addr pc) {
    auto d = c.tracer(kTid)->read(BtraceRead::Delta, pc);
    REQUIRE(d.ok());
    return d->blocks;
  }
};

}  // namespace

TEST_CASE("SoftEmulate plants on the first branch past system calls and runs natively", "[soft]") {
  Fixture f;
  f.at(0x1000);
  CHECK_FALSE(f.c.wants_step(kTid, 0x1000, 0, false, f.host));  // runs
  CHECK(f.host.planted == std::set<tracer::Addr>{0x1005});
  // The trap on the call: performed, recorded, return address pushed.
  CHECK(f.c.at_site(kTid, 0x1005, true, f.host) == SiteVerdict::Performed);
  CHECK(f.host.regs[kTid][ax::kRip] == 0x1020);
  CHECK(f.host.regs[kTid][ax::kRsp] == kStack - 8);
  CHECK(f.host.memory[kStack - 8] == 0x0a);
  CHECK_FALSE(f.c.wants_step(kTid, 0x1020, 0, false, f.host));
  CHECK(f.host.planted.count(0x1021) == 1);
  CHECK(f.c.at_site(kTid, 0x1021, true, f.host) == SiteVerdict::Performed);  // ret
  CHECK(f.host.regs[kTid][ax::kRip] == 0x100a);
  CHECK(f.host.regs[kTid][ax::kRsp] == kStack);
  // jne is where the run from 0x100a starts: performed before running, without a trap.
  CHECK_FALSE(f.c.wants_step(kTid, 0x100a, 0, false, f.host));
  CHECK(f.c.at_site(kTid, 0x100a, false, f.host) == SiteVerdict::Performed);
  CHECK(f.host.regs[kTid][ax::kRip] == 0x1000);
  const std::vector<BranchSample> want{{0x1005, 0x1020}, {0x1021, 0x100a}, {0x100a, 0x1000}};
  CHECK(f.delta(0x1000) == tracer::blocks_from_samples(want, 0x1000, true));
  auto stats = f.c.tracer(kTid)->stats();
  CHECK(stats.backend == "soft");
  CHECK(stats.emulated == 3);
  CHECK(stats.stepped == 0);
  CHECK(stats.gaps == 0);
}

TEST_CASE("SoftEmulate: a jcc not taken is performed but is no branch", "[soft]") {
  Fixture f;
  f.host.regs[kTid][ax::kEflags] = 0x242;  // ZF set: jne falls through
  f.at(0x100a);
  CHECK(f.c.at_site(kTid, 0x100a, false, f.host) == SiteVerdict::Performed);
  CHECK(f.host.regs[kTid][ax::kRip] == 0x100c);
  CHECK(f.c.tracer(kTid)->stats().recorded == 0);
}

TEST_CASE("SoftEmulate: off its straight line, or at an int3 it did not plan, is a gap", "[soft][gap]") {
  Fixture f;
  f.at(0x1000);
  REQUIRE_FALSE(f.c.wants_step(kTid, 0x1000, 0, false, f.host));
  // Trapped at 0x1021 while the run from 0x1000 should have ended at 0x1005.
  f.at(0x1021);
  CHECK(f.c.at_site(kTid, 0x1021, true, f.host) == SiteVerdict::Performed);
  auto s = f.c.tracer(kTid)->stats();
  CHECK(s.gaps == 1);
  CHECK(s.recorded == 2);  // the gap, then the ret found there
  // Stopped (say by GDB) at a pc off the planned run: a gap again.
  REQUIRE_FALSE(f.c.wants_step(kTid, 0x1000, 0, false, f.host));
  CHECK_FALSE(f.c.wants_step(kTid, 0x1020, 0, false, f.host));
  CHECK(f.c.tracer(kTid)->stats().gaps == 2);
  // On it: no gap.
  CHECK_FALSE(f.c.wants_step(kTid, 0x1021, 0, false, f.host));
  CHECK(f.c.tracer(kTid)->stats().gaps == 2);
}

TEST_CASE("SoftEmulate steps what it does not run natively: signals, GDB's steps", "[soft]") {
  Fixture f;
  f.at(0x1000);
  CHECK(f.c.wants_step(kTid, 0x1000, 10, false, f.host));  // a signal to deliver
  CHECK(f.c.wants_step(kTid, 0x1000, 0, true, f.host));    // GDB's own step
  CHECK(f.host.planted.empty());
  // A thread it does not trace is performed for, never recorded.
  f.host.regs[8] = f.host.regs[kTid];
  f.host.regs[8][ax::kRip] = 0x1005;
  CHECK(f.c.at_site(8, 0x1005, true, f.host) == SiteVerdict::Performed);
  CHECK(f.host.regs[8][ax::kRip] == 0x1020);
  CHECK_FALSE(f.c.wants_step(8, 0x1020, 0, false, f.host));
}

TEST_CASE("SoftEmulate: what it cannot perform is stepped over by the core", "[soft]") {
  Fixture f;
  f.host.load(0x2000, {0x48, 0xcf});  // iretq
  CHECK(f.c.at_site(kTid, 0x2000, true, f.host) == SiteVerdict::StepOver);
  f.host.regs[kTid][ax::kRsp] = 0x100;  // a ret whose stack is unmapped: the CPU faults on it
  CHECK(f.c.at_site(kTid, 0x100c, true, f.host) == SiteVerdict::StepOver);
  CHECK(f.c.tracer(kTid)->stats().recorded == 0);
  // Code it cannot read: stepped.
  CHECK(f.c.wants_step(kTid, 0x9000, 0, false, f.host));
}

namespace {

// The fixture's code with 0x1000-0x1010 in the program and 0x1020-0x1030 in libc: the call at
// 0x1005 leaves the scope "exe".
struct ScopedFixture : Fixture {
  ScopedFixture() : Fixture(*tracer::parse_btrace_scope("exe")) {
    host.maps = {{0x1000, 0x1010, "/prog"}, {0x1020, 0x1030, "/lib/libc.so.6"}};
  }
};

}  // namespace

TEST_CASE("SoftEmulate --btrace-scope: a call out runs natively, its return traps once: a call and a return",
          "[soft][scope]") {
  ScopedFixture f;
  f.at(0x1000);
  REQUIRE_FALSE(f.c.wants_step(kTid, 0x1000, 0, false, f.host));
  CHECK(f.c.at_site(kTid, 0x1005, true, f.host) == SiteVerdict::Performed);  // call into libc
  CHECK(f.host.planted.count(0x100a) == 1);                                 // its return point
  CHECK_FALSE(f.c.wants_step(kTid, 0x1020, 0, false, f.host));              // libc: natively,
  CHECK(f.host.planted.count(0x1021) == 0);                                 // nothing planted
  // libc calls back into the program (deeper on the stack): performed, not recorded.
  f.host.regs[kTid][ax::kRsp] = kStack - 64;
  f.host.load(kStack - 64, {0x30, 0x10, 0, 0, 0, 0, 0, 0});  // a return address into libc
  f.at(0x100c);
  CHECK(f.c.at_site(kTid, 0x100c, true, f.host) == SiteVerdict::Performed);  // the callback's ret
  CHECK(f.host.regs[kTid][ax::kRip] == 0x1030);
  CHECK(f.c.tracer(kTid)->stats().recorded == 1);
  // libc returns (natively) to 0x100a and traps there: recorded as the callee returning.
  f.host.regs[kTid][ax::kRsp] = kStack;
  f.at(0x100a);
  CHECK(f.c.at_site(kTid, 0x100a, true, f.host) == SiteVerdict::Performed);  // then the jne
  const std::vector<BranchSample> want{{0x1005, 0x1020}, {0x1020, 0x100a}, {0x100a, 0x1000}};
  CHECK(f.delta(0x1000) == tracer::blocks_from_samples(want, 0x1000, true));
  CHECK(f.c.tracer(kTid)->stats().gaps == 0);
}

TEST_CASE("SoftEmulate --btrace-scope: back by a way it did not watch is a gap", "[soft][scope][gap]") {
  ScopedFixture f;
  f.at(0x1000);
  REQUIRE_FALSE(f.c.wants_step(kTid, 0x1000, 0, false, f.host));
  REQUIRE(f.c.at_site(kTid, 0x1005, true, f.host) == SiteVerdict::Performed);
  // Found in the program above the frame it left (longjmp, an unwind): a gap, recording again.
  f.host.regs[kTid][ax::kRsp] = kStack + 16;
  f.at(0x1000);
  CHECK_FALSE(f.c.wants_step(kTid, 0x1000, 0, false, f.host));
  auto s = f.c.tracer(kTid)->stats();
  CHECK(s.gaps == 1);
  CHECK(s.recorded == 2);  // the call, the gap
  CHECK(f.host.planted.count(0x1005) == 1);  // planning runs in scope again
}
