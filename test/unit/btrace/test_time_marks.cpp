// When branches were recorded: the clock readings a collector keeps (TimeMarks), the time of
// a sample estimated between them, and each block's time as triage reads a history.
#include <catch2/catch.hpp>

#include <vector>

#include "tracer/btrace/history_ring.hpp"
#include "tracer/btrace/time_marks.hpp"

using tracer::BranchSample;
using tracer::BtraceBlock;
using tracer::estimate_time;
using tracer::TimeMark;
using tracer::TimeMarks;
using Marks = std::vector<TimeMark>;

TEST_CASE("TimeMarks: readings spaced over the ring, the newest always kept", "[btrace][time]") {
  TimeMarks marks(4, 40);  // four readings for a ring of 40 samples: 10 samples apart
  CHECK(marks.marks().empty());
  marks.add(0, 100);
  marks.add(3, 130);  // too close to the one before: only as the newest
  CHECK(marks.marks() == Marks{{0, 100}, {3, 130}});
  marks.add(10, 200);
  marks.add(12, 220);
  CHECK(marks.marks() == Marks{{0, 100}, {10, 200}, {12, 220}});
  marks.add(20, 300);
  marks.add(30, 400);
  marks.add(40, 500);  // the fifth spaced reading overwrites the oldest
  CHECK(marks.marks() == Marks{{10, 200}, {20, 300}, {30, 400}, {40, 500}});
  marks.add(39, 600);  // backwards in position: not a reading of this ring
  marks.add(45, 450);  // backwards in time
  CHECK(marks.marks().back() == TimeMark{40, 500});
}

TEST_CASE("estimate_time: between the readings around a sample, spread evenly", "[btrace][time]") {
  const Marks marks{{10, 1000}, {20, 2000}, {20, 2500}, {30, 2600}};
  CHECK(estimate_time(marks, 5) == 0);      // before any reading: unknown
  CHECK(estimate_time(marks, 10) == 1100);  // the first of ten written between 1000 and 2000
  CHECK(estimate_time(marks, 19) == 2000);  // the last of them
  CHECK(estimate_time(marks, 20) == 2510);  // after the later of two readings at 20
  CHECK(estimate_time(marks, 29) == 2600);
  CHECK(estimate_time(marks, 35) == 2600);  // after the last reading: bounded by nothing later
}

TEST_CASE("add_stop_mark: the thread's stop bounds its newest samples", "[btrace][time]") {
  Marks marks{{0, 100}};
  tracer::add_stop_mark(marks, 4, 500);
  CHECK(marks == Marks{{0, 100}, {4, 500}});
  CHECK(estimate_time(marks, 1) == 300);
  tracer::add_stop_mark(marks, 5, 0);    // unknown stop: nothing
  tracer::add_stop_mark(marks, 6, 400);  // earlier than a reading: not a bound
  CHECK(marks.size() == 2);
}

TEST_CASE("timed_blocks: each block takes the time of the branch that began it", "[btrace][time]") {
  // Samples 100..102 (positions): main -> f, f -> g, g -> main; the thread is at 0x1050.
  const std::vector<BranchSample> s{{0x1010, 0x2000}, {0x2010, 0x3000}, {0x3010, 0x1020}};
  const Marks marks{{100, 1000}, {103, 4000}};
  const tracer::TimedBlocks t = tracer::timed_blocks(s, {}, 100, 0x1050, marks);
  REQUIRE(t.blocks == std::vector<BtraceBlock>{{0x1020, 0x1050}, {0x3000, 0x3010}, {0x2000, 0x2010}});
  CHECK(t.began_ns == std::vector<std::uint64_t>{4000, 3000, 2000});
  // A gap: the block before it has no known end and goes; the gap itself has no time.
  const std::vector<BranchSample> gapped{{0x1010, 0x2000}, BranchSample::gap(0x3000), {0x3010, 0x1020}};
  const tracer::TimedBlocks g = tracer::timed_blocks(gapped, {}, 100, 0x1050, marks);
  REQUIRE(g.blocks == std::vector<BtraceBlock>{{0x1020, 0x1050}, {0x3000, 0x3010}, tracer::kGapBlock});
  CHECK(g.began_ns == std::vector<std::uint64_t>{4000, 3000, 0});
}

TEST_CASE("HistoryRing: a wrapped ring's blocks are timed by their absolute positions", "[btrace][time]") {
  tracer::HistoryRing ring(3 * tracer::kBtsSampleBytes);  // three samples
  for (std::uint64_t n = 0; n < 5; ++n) {
    ring.push(BranchSample{0x1000 + 0x10 * n, 0x1008 + 0x10 * n});
    ring.mark_time(1000 * (n + 1));  // sample n written before (n + 1) us
  }
  const tracer::TimedBlocks t = ring.timed(0x1060, 9000);
  REQUIRE(t.blocks.size() == 3);  // samples 2, 3, 4 kept
  CHECK(t.blocks.front() == BtraceBlock{0x1048, 0x1060});
  CHECK(t.began_ns == std::vector<std::uint64_t>{5000, 4000, 3000});
}
