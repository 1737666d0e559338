// read_bts_snapshot: all / new / delta over kernel-layout rings, with the §12 vectors.
#include <catch2/catch.hpp>

#include "perf_ring_builder.hpp"
#include "tracer/btrace/bts_decode.hpp"
#include "tv_program.hpp"

using namespace test_btrace;
using tracer::BtraceRead;
using tracer::PerfSnapshot;

namespace {

Blocks read_ok(const PerfSnapshot& snap, BtraceRead kind, tracer::Addr pc, std::uint64_t& last) {
  auto r = tracer::read_bts_snapshot(snap, kind, pc, last);
  REQUIRE(r);
  return r->blocks;
}

bool overflows(const PerfSnapshot& snap, tracer::Addr pc, std::uint64_t& last) {
  std::uint64_t before = last;
  auto r = tracer::read_bts_snapshot(snap, BtraceRead::Delta, pc, last);
  return !r && r.error().code == base::Errc::overflow && last == before;
}

void push(PerfRingBuilder& ring, const tracer::BranchSample& s) {
  ring.sample(s.from, s.to);
}

}  // namespace

TEST_CASE("BTS read: TV1-TV4 through a kernel-layout ring", "[bts][tv]") {
  PerfRingBuilder ring(256);
  std::uint64_t last = 0;
  CHECK(read_ok(ring.snapshot(), BtraceRead::Delta, kMain, last) == Blocks{{0, kMain}});
  CHECK(read_ok(ring.snapshot(), BtraceRead::All, kMain, last).empty());
  CHECK(read_ok(ring.snapshot(), BtraceRead::New, kMain, last).empty());
  push(ring, kCall);
  std::uint64_t copy = last;
  CHECK(read_ok(ring.snapshot(), BtraceRead::New, kBreak, copy) == kTv2All);
  CHECK(read_ok(ring.snapshot(), BtraceRead::Delta, kBreak, last) == kTv2Delta);
  CHECK(last == 24);
  for (const auto& s : kTv3Samples) {
    push(ring, s);
  }
  CHECK(read_ok(ring.snapshot(), BtraceRead::Delta, kBreak, last) == kTv3Delta);
  CHECK(read_ok(ring.snapshot(), BtraceRead::Delta, kRet, last) == Blocks{{0, kRet}});
  CHECK(read_ok(ring.snapshot(), BtraceRead::Delta, kRet, last) == Blocks{{0, kRet}});
  CHECK(read_ok(ring.snapshot(), BtraceRead::New, kRet, last).empty());  // TV8
}

TEST_CASE("BTS read: TV5-TV7 overflow, then new/all return what the ring holds", "[bts][tv]") {
  PerfRingBuilder ring(256);  // 10 whole samples (the vectors' ring held 8)
  std::uint64_t last = 0;
  push(ring, kCall);
  REQUIRE(read_ok(ring.snapshot(), BtraceRead::Delta, kBreak, last) == kTv2Delta);
  for (int i = 0; i < 5; ++i) {
    push(ring, kReturn);
    push(ring, kJump);
    push(ring, kCall);
  }
  CHECK(overflows(ring.snapshot(), kBreak, last));
  CHECK(overflows(ring.snapshot(), kBreak, last));
  std::uint64_t copy = last;
  Blocks fresh = read_ok(ring.snapshot(), BtraceRead::New, kBreak, copy);
  Blocks all = read_ok(ring.snapshot(), BtraceRead::All, kBreak, last);
  CHECK(fresh == all);
  REQUIRE(all.size() == 10);
  CHECK(Blocks(all.begin(), all.begin() + 8) == kTv5New);
  CHECK(read_ok(ring.snapshot(), BtraceRead::All, kBreak, last) == all);  // TV7
  CHECK(read_ok(ring.snapshot(), BtraceRead::Delta, kBreak, last) == Blocks{{0, kBreak}});
}

TEST_CASE("BTS read: TV9 kernel sample inside a delta", "[bts][tv][kernel]") {
  PerfRingBuilder ring(4096);
  std::uint64_t last = 0;
  REQUIRE(read_ok(ring.snapshot(), BtraceRead::Delta, 0x401100, last) == Blocks{{0, 0x401100}});
  ring.sample(0xffffffff81e00190, 0x401107);
  ring.sample(0x401107, 0x401200);
  CHECK(read_ok(ring.snapshot(), BtraceRead::Delta, 0x401200, last) ==
        Blocks{{0x401200, 0x401200}, {0, 0x401107}});
}

TEST_CASE("BTS read: a delta over exactly the ring size is fine, one record more overflows", "[bts]") {
  PerfRingBuilder ring(4096);  // 170 whole samples; 171 * 24 = 4104 > 4096
  std::uint64_t last = 0;
  for (int i = 0; i < 170; ++i) {
    push(ring, kJump);
  }
  std::uint64_t copy = last;
  CHECK(read_ok(ring.snapshot(), BtraceRead::Delta, kLoopCall, copy).size() == 171);
  push(ring, kJump);
  CHECK(overflows(ring.snapshot(), kLoopCall, last));
}

TEST_CASE("BTS read: a LOST record inside the delta makes it an overflow; new still works", "[bts][lost]") {
  PerfRingBuilder ring(4096);
  std::uint64_t last = 0;
  push(ring, kCall);
  REQUIRE(read_ok(ring.snapshot(), BtraceRead::Delta, kBreak, last) == kTv2Delta);
  push(ring, kReturn);
  ring.lost(1, 3);
  push(ring, kCall);
  CHECK(overflows(ring.snapshot(), kBreak, last));
  CHECK(read_ok(ring.snapshot(), BtraceRead::New, kBreak, last) == kTv2All);  // only after the hole
}

TEST_CASE("BTS read: head behind last, and a copy the kernel kept overwriting", "[bts]") {
  PerfRingBuilder ring(256);
  for (int i = 0; i < 3; ++i) {
    push(ring, kCall);
  }
  std::uint64_t last = ring.head() + 24;  // impossible: treat as lost
  CHECK(overflows(ring.snapshot(), kBreak, last));

  last = 24;
  PerfSnapshot moving = ring.snapshot();
  moving.stable_from = 48;  // the kernel overwrote up to 48 while we copied
  CHECK(overflows(moving, kBreak, last));
  auto all = tracer::read_bts_snapshot(moving, BtraceRead::All, kBreak, last);
  REQUIRE(all);
  CHECK(all->blocks.size() == 1);  // only the record after 48
  CHECK(last == ring.head());
}
