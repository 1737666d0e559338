// HistoryRing and RingBufferTracer: all / new / delta (btrace.md §6) and the §12 vectors.
#include <catch2/catch.hpp>

#include "tracer/btrace/history_ring.hpp"
#include "tracer/btrace/ring_buffer_tracer.hpp"
#include "tv_program.hpp"

using namespace test_btrace;
using tracer::BtraceRead;
using tracer::HistoryRing;

namespace {

Blocks read_ok(HistoryRing& ring, BtraceRead kind, tracer::Addr pc) {
  auto r = ring.read(kind, pc);
  REQUIRE(r);
  return r->blocks;
}

bool is_overflow(HistoryRing& ring, tracer::Addr pc) {
  auto r = ring.read(BtraceRead::Delta, pc);
  return !r && r.error().code == base::Errc::overflow && r.error().message() == "Overflow.";
}

void loop_iterations(HistoryRing& ring, int n) {
  for (int i = 0; i < n; ++i) {
    ring.push(kReturn);
    ring.push(kJump);
    ring.push(kCall);
  }
}

}  // namespace

TEST_CASE("ring capacity: bts_size / 24, at least one", "[ring]") {
  CHECK(tracer::ring_capacity(192) == 8);
  CHECK(tracer::ring_capacity(0x10000) == 2730);
  CHECK(tracer::ring_capacity(215) == 8);
  CHECK(tracer::ring_capacity(23) == 1);
  CHECK(tracer::ring_capacity(0) == 1);
  CHECK(HistoryRing().capacity() == 2730);
  CHECK(HistoryRing(0xffffffff).capacity() == 0xffffffffULL / 24);  // allocated lazily
}

TEST_CASE("TV1: enable, no progress", "[ring][tv]") {
  HistoryRing delta(kTvRingBytes);
  CHECK(read_ok(delta, BtraceRead::Delta, kMain) == Blocks{{0, kMain}});
  HistoryRing all(kTvRingBytes);
  CHECK(read_ok(all, BtraceRead::All, kMain).empty());
  HistoryRing fresh(kTvRingBytes);
  CHECK(read_ok(fresh, BtraceRead::New, kMain).empty());
}

TEST_CASE("TV2-TV4: call, then return/jump/call, then a step without a branch", "[ring][tv]") {
  HistoryRing ring(kTvRingBytes);
  REQUIRE(read_ok(ring, BtraceRead::Delta, kMain) == Blocks{{0, kMain}});
  ring.push(kCall);
  SECTION("all and new for the TV2 state") {
    HistoryRing copy = ring;
    CHECK(read_ok(copy, BtraceRead::All, kBreak) == kTv2All);
    CHECK(read_ok(ring, BtraceRead::New, kBreak) == kTv2All);
  }
  SECTION("the delta sequence GDB sends") {
    CHECK(read_ok(ring, BtraceRead::Delta, kBreak) == kTv2Delta);
    for (const auto& s : kTv3Samples) {
      ring.push(s);
    }
    CHECK(read_ok(ring, BtraceRead::Delta, kBreak) == kTv3Delta);
    // TV4: stepi over pop, then the same question again.
    CHECK(read_ok(ring, BtraceRead::Delta, kRet) == Blocks{{0, kRet}});
    CHECK(read_ok(ring, BtraceRead::Delta, kRet) == Blocks{{0, kRet}});
    CHECK(ring.last() == ring.head());
    // TV8: new with nothing new.
    CHECK(read_ok(ring, BtraceRead::New, kRet).empty());
    // all still returns the whole ring: 4 samples, newest first, no start-unknown block.
    CHECK(read_ok(ring, BtraceRead::All, kRet) ==
          Blocks{{kF, kRet}, {kLoopCall, kLoopCall}, {kLoopJmp, kLoopJmp}, {kF, kRet}});
  }
}

TEST_CASE("TV5-TV7: overflow; new, all and all again return the last 8 samples", "[ring][tv]") {
  HistoryRing ring(kTvRingBytes);
  REQUIRE(read_ok(ring, BtraceRead::Delta, kMain).size() == 1);
  ring.push(kCall);
  REQUIRE(read_ok(ring, BtraceRead::Delta, kBreak) == kTv2Delta);
  loop_iterations(ring, 5);
  CHECK(is_overflow(ring, kBreak));
  CHECK(ring.last() == 1);  // unchanged by the failed delta
  CHECK(is_overflow(ring, kBreak));
  SECTION("TV5: new succeeds") {
    CHECK(read_ok(ring, BtraceRead::New, kBreak) == kTv5New);
  }
  SECTION("TV6: new failed in GDB's eyes; all") {
    CHECK(read_ok(ring, BtraceRead::All, kBreak) == kTv5New);
  }
  // TV7: after maint btrace clear GDB sends all; no execution in between.
  CHECK(read_ok(ring, BtraceRead::All, kBreak) == kTv5New);
  // The overflow is over: a delta with no progress is the single start-unknown block.
  CHECK(read_ok(ring, BtraceRead::Delta, kBreak) == Blocks{{0, kBreak}});
}

TEST_CASE("delta: exactly capacity samples since last is not an overflow, one more is", "[ring]") {
  HistoryRing ring(kTvRingBytes);
  for (int i = 0; i < 8; ++i) {
    ring.push({0x1000u + 0x10u * i, 0x2000u + 0x10u * i});
  }
  HistoryRing over = ring;
  auto full = ring.read(BtraceRead::Delta, 0x9000);
  REQUIRE(full);
  CHECK(full->blocks.size() == 9);
  CHECK(full->blocks.front() == tracer::BtraceBlock{0x2070, 0x9000});
  CHECK(full->blocks.back() == tracer::BtraceBlock{0, 0x1000});
  over.push({0x1080, 0x2080});
  CHECK(is_overflow(over, 0x9000));
}

TEST_CASE("wrap: the ring keeps the newest samples in order after many laps", "[ring]") {
  HistoryRing ring(5 * 24);
  for (std::uint64_t i = 0; i < 23; ++i) {
    ring.push({0x1000 + i, 0x2000 + i});
  }
  CHECK(ring.head() == 23);
  CHECK(ring.kept() == 5);
  auto kept = ring.samples_since(0);
  REQUIRE(kept.size() == 5);
  for (std::uint64_t i = 0; i < 5; ++i) {
    CHECK(kept[i] == tracer::BranchSample{0x1000 + 18 + i, 0x2000 + 18 + i});
  }
  CHECK(ring.samples_since(21).size() == 2);
  CHECK(ring.samples_since(23).empty());
  CHECK(read_ok(ring, BtraceRead::All, 0x5000) ==
        Blocks{{0x2016, 0x5000}, {0x2015, 0x1016}, {0x2014, 0x1015}, {0x2013, 0x1014}, {0x2012, 0x1013}});
  // After the all read, a delta over 3 new samples sees only them.
  for (std::uint64_t i = 23; i < 26; ++i) {
    ring.push({0x1000 + i, 0x2000 + i});
  }
  CHECK(read_ok(ring, BtraceRead::Delta, 0x5000) ==
        Blocks{{0x2019, 0x5000}, {0x2018, 0x1019}, {0x2017, 0x1018}, {0, 0x1017}});
}

TEST_CASE("a ring of one sample", "[ring]") {
  HistoryRing ring(0);
  REQUIRE(ring.capacity() == 1);
  ring.push({0x10, 0x20});
  CHECK(read_ok(ring, BtraceRead::Delta, 0x24) == Blocks{{0x20, 0x24}, {0, 0x10}});
  ring.push({0x24, 0x30});
  ring.push({0x34, 0x40});
  CHECK(is_overflow(ring, 0x44));
  CHECK(read_ok(ring, BtraceRead::New, 0x44) == Blocks{{0x40, 0x44}});
}

TEST_CASE("new: empty when nothing was pushed since the last read of any kind", "[ring]") {
  HistoryRing ring(kTvRingBytes);
  ring.push(kCall);
  REQUIRE(read_ok(ring, BtraceRead::All, kBreak) == kTv2All);
  CHECK(read_ok(ring, BtraceRead::New, kBreak).empty());
  ring.push(kReturn);
  CHECK(read_ok(ring, BtraceRead::New, kLoopJmp) == Blocks{{kLoopJmp, kLoopJmp}, {kF, kRet}});
  CHECK(read_ok(ring, BtraceRead::New, kLoopJmp).empty());
}

TEST_CASE("TV9: kernel samples pushed into the ring never show up in blocks", "[ring][kernel]") {
  HistoryRing ring(kTvRingBytes);
  REQUIRE(read_ok(ring, BtraceRead::Delta, 0x401100) == Blocks{{0, 0x401100}});
  ring.push({0xffffffff81e00190, 0x401107});
  ring.push({0x401107, 0x401200});
  CHECK(read_ok(ring, BtraceRead::Delta, 0x401200) == Blocks{{0x401200, 0x401200}, {0, 0x401107}});
  // They still take room in the ring, as they would in the BTS buffer.
  CHECK(ring.stats().kept == 2);
}

TEST_CASE("stats: capacity, kept, recorded, lost", "[ring]") {
  HistoryRing ring(kTvRingBytes);
  auto s = ring.stats();
  CHECK(s.capacity == 8);
  CHECK(s.kept == 0);
  CHECK(s.recorded == 0);
  CHECK(s.lost == 0);
  CHECK(s.backend.empty());
  loop_iterations(ring, 5);
  s = ring.stats();
  CHECK(s.kept == 8);
  CHECK(s.recorded == 15);
  CHECK(s.lost == 7);
  // Branches a collector lost before they reached the ring (the in-process recorder's ring went
  // round between two stops) count as recorded and lost, never as none.
  ring.missed(100);
  s = ring.stats();
  CHECK(s.kept == 8);
  CHECK(s.recorded == 115);
  CHECK(s.lost == 107);
}

TEST_CASE("RingBufferTracer: record, read, conf, stats", "[ring][tracer]") {
  tracer::RingBufferTracer soft("soft", tracer::BtraceConfig{kTvRingBytes});
  tracer::BranchTracer& t = soft;
  CHECK(t.conf().bts_size == kTvRingBytes);
  auto first = t.read(BtraceRead::Delta, kMain);
  REQUIRE(first);
  CHECK(first->blocks == Blocks{{0, kMain}});
  soft.record(kCall);
  auto second = t.read(BtraceRead::Delta, kBreak);
  REQUIRE(second);
  CHECK(second->blocks == kTv2Delta);
  for (int i = 0; i < 9; ++i) {
    soft.record(kReturn);
  }
  auto over = t.read(BtraceRead::Delta, kBreak);
  REQUIRE_FALSE(over);
  CHECK(over.error().code == base::Errc::overflow);
  auto s = t.stats();
  CHECK(s.backend == "soft");
  CHECK(s.capacity == 8);
  CHECK(s.recorded == 10);
  CHECK(s.kept == 8);
  CHECK(s.lost == 2);

  tracer::RingBufferTracer step("step", tracer::BtraceConfig{});
  CHECK(step.conf().bts_size == tracer::kDefaultBtsBufferSize);
  CHECK(step.stats().capacity == 2730);
  CHECK(step.stats().backend == "step");
  tracer::RingBufferTracer tiny("soft", tracer::BtraceConfig{0});
  CHECK(tiny.conf().bts_size == tracer::kBtsSampleBytes);  // what the one-sample ring holds
}

TEST_CASE("a new reader of a history that began before it: the first delta overflows, then all",
          "[ring]") {
  HistoryRing ring(64 * 1024);
  ring.push({0x1000, 0x2000});
  ring.push({0x2010, 0x3000});
  ring.new_reader();
  CHECK(is_overflow(ring, 0x3004));
  // GDB falls back to `new`: the whole history, with no start-unknown block.
  auto all = read_ok(ring, BtraceRead::New, 0x3004);
  REQUIRE(all.size() == 2);
  CHECK(all.front() == tracer::BtraceBlock{0x3000, 0x3004});
  // From then on deltas are ordinary.
  ring.push({0x3004, 0x4000});
  auto delta = read_ok(ring, BtraceRead::Delta, 0x4000);
  CHECK(delta.back().begin == 0);
  // With nothing recorded there is nothing to overflow.
  HistoryRing empty(64 * 1024);
  empty.new_reader();
  CHECK_FALSE(is_overflow(empty, 0x1000));
}

TEST_CASE("a first delta that starts with a gap overflows (nothing to stitch it to); later ones stitch",
          "[ring][gap]") {
  HistoryRing ring;
  ring.push(tracer::BranchSample::gap(0x3000));
  ring.push({0x3008, 0x4000});
  auto first = ring.read(BtraceRead::Delta, 0x4004);
  REQUIRE_FALSE(first);
  CHECK(first.error().code == base::Errc::overflow);
  CHECK(read_ok(ring, BtraceRead::All, 0x4004) == Blocks{{0x4000, 0x4004}, {0x3000, 0x3008}});
  ring.push(tracer::BranchSample::gap(0x5000));
  CHECK(read_ok(ring, BtraceRead::Delta, 0x5004) == Blocks{{0x5000, 0x5004}, tracer::kGapBlock, {0, 0x4004}});
}
