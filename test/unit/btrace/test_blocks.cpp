// blocks_from_samples: the walk every backend shares (btrace.md §6, §9.4, §9.5).
#include <catch2/catch.hpp>

#include <vector>

#include "tracer/btrace/history_ring.hpp"

using tracer::blocks_from_samples;
using tracer::BranchSample;
using tracer::BtraceBlock;
using Blocks = std::vector<BtraceBlock>;

TEST_CASE("blocks_from_samples: no samples", "[blocks]") {
  CHECK(blocks_from_samples({}, 0x401000, true) == Blocks{{0, 0x401000}});
  CHECK(blocks_from_samples({}, 0x401000, false).empty());
}

TEST_CASE("blocks_from_samples: newest first, end inclusive, start-unknown last", "[blocks]") {
  std::vector<BranchSample> s = {{0x401025, 0x401009}, {0x401009, 0x401004}, {0x401004, 0x401020}};
  CHECK(blocks_from_samples(s, 0x401024, true) ==
        Blocks{{0x401020, 0x401024}, {0x401004, 0x401004}, {0x401009, 0x401009}, {0, 0x401025}});
  CHECK(blocks_from_samples(s, 0x401024, false) ==
        Blocks{{0x401020, 0x401024}, {0x401004, 0x401004}, {0x401009, 0x401009}});
}

TEST_CASE("blocks_from_samples: consecutive blocks are linked by a branch", "[blocks]") {
  std::vector<BranchSample> s = {{0x1010, 0x2000}, {0x2008, 0x3000}, {0x3004, 0x1000}, {0x1002, 0x4000}};
  Blocks b = blocks_from_samples(s, 0x4010, true);
  REQUIRE(b.size() == s.size() + 1);
  CHECK(b.front().end == 0x4010);
  for (std::size_t i = 0; i + 1 < b.size(); ++i) {
    // b[i+1].end is the branch whose target is b[i].begin; samples are oldest first.
    const BranchSample& branch = s[s.size() - 1 - i];
    CHECK(b[i].begin == branch.to);
    CHECK(b[i + 1].end == branch.from);
  }
  CHECK(b.back() == BtraceBlock{0, 0x1010});
}

TEST_CASE("blocks_from_samples: a kernel `from` neither ends nor starts a block (TV9)", "[blocks][kernel]") {
  std::vector<BranchSample> s = {{0xffffffff81e00190, 0x401107}, {0x401107, 0x401200}};
  CHECK(blocks_from_samples(s, 0x401200, true) == Blocks{{0x401200, 0x401200}, {0, 0x401107}});
  CHECK(blocks_from_samples(s, 0x401200, false) == Blocks{{0x401200, 0x401200}});
}

TEST_CASE("blocks_from_samples: kernel samples in the middle and at both ends", "[blocks][kernel]") {
  std::vector<BranchSample> s = {
      {0xffffffff81000000, 0x1000},  // oldest: interrupt return
      {0x1010, 0x2000},
      {0xffff800000000000, 0x2004},  // lowest kernel address: syscall return
      {0x2010, 0x3000},
      {0xfffffe0000001234, 0x3004},  // newest: page-fault return
  };
  CHECK(blocks_from_samples(s, 0x3008, true) == Blocks{{0x3000, 0x3008}, {0x2000, 0x2010}, {0, 0x1010}});
  CHECK(blocks_from_samples(s, 0x3008, false) == Blocks{{0x3000, 0x3008}, {0x2000, 0x2010}});
  std::vector<BranchSample> only_kernel = {{0xffffffff81000000, 0x1000}};
  CHECK(blocks_from_samples(only_kernel, 0x1004, true) == Blocks{{0, 0x1004}});
  CHECK(blocks_from_samples(only_kernel, 0x1004, false).empty());
}

TEST_CASE("is_kernel_address: bit 63", "[blocks][kernel]") {
  CHECK_FALSE(tracer::is_kernel_address(0));
  CHECK_FALSE(tracer::is_kernel_address(0x00007fffffffffff));
  CHECK_FALSE(tracer::is_kernel_address(0x7fffffffffffffff));
  CHECK(tracer::is_kernel_address(0x8000000000000000));
  CHECK(tracer::is_kernel_address(0xffff800000000000));
  CHECK(tracer::is_kernel_address(0xffffffffff600000));  // vsyscall page counts as kernel
}

TEST_CASE("blocks_from_samples: a branch to itself is a one-instruction block", "[blocks]") {
  std::vector<BranchSample> s = {{0x5000, 0x5000}, {0x5000, 0x5000}};  // jmp . twice
  CHECK(blocks_from_samples(s, 0x5000, true) == Blocks{{0x5000, 0x5000}, {0x5000, 0x5000}, {0, 0x5000}});
}

TEST_CASE("blocks_from_samples: a gap becomes GDB's gap block, never a branch", "[blocks][gap]") {
  using tracer::kGapBlock;
  // 0x1000 -> 0x2000, then the path was lost; found again at 0x3000, then 0x3008 -> 0x4000.
  std::vector<BranchSample> s = {{0x1000, 0x2000}, BranchSample::gap(0x3000), {0x3008, 0x4000}};
  // The block after 0x2000 has no known end: it is left out; the gap stands in for it.
  CHECK(blocks_from_samples(s, 0x4004, true) ==
        Blocks{{0x4000, 0x4004}, {0x3000, 0x3008}, kGapBlock, {0, 0x1000}});
  CHECK(blocks_from_samples(s, 0x4004, false) == Blocks{{0x4000, 0x4004}, {0x3000, 0x3008}, kGapBlock});
  // The oldest event a gap: `all` starts after it; a delta still ends with the block GDB
  // stitches on, at the pc of the previous read.
  std::vector<BranchSample> g = {BranchSample::gap(0x3000), {0x3008, 0x4000}};
  CHECK(blocks_from_samples(g, 0x4004, false) == Blocks{{0x4000, 0x4004}, {0x3000, 0x3008}});
  CHECK(blocks_from_samples(g, 0x4004, true, 0x2010) ==
        Blocks{{0x4000, 0x4004}, {0x3000, 0x3008}, kGapBlock, {0, 0x2010}});
  CHECK(kGapBlock.end < kGapBlock.begin);  // what GDB's BTS decoder takes for a gap
}

TEST_CASE("blocks_from_samples: two gaps in a row are one", "[blocks][gap]") {
  using tracer::kGapBlock;
  // (a thread run natively to one stop and then to another before the in-process recorder came in)
  std::vector<BranchSample> s = {{0x1000, 0x2000}, BranchSample::gap(0x3000), BranchSample::gap(0x3800),
                                 {0x3808, 0x4000}};
  CHECK(blocks_from_samples(s, 0x4004, false) == Blocks{{0x4000, 0x4004}, {0x3800, 0x3808}, kGapBlock});
  std::vector<BranchSample> first = {BranchSample::gap(0x3000), BranchSample::gap(0x3800), {0x3808, 0x4000}};
  CHECK(blocks_from_samples(first, 0x4004, false) == Blocks{{0x4000, 0x4004}, {0x3800, 0x3808}});
}

TEST_CASE("blocks_from_samples: samples in two pieces (a wrapped ring) read as one list", "[blocks][gap]") {
  const std::vector<BranchSample> s = {{0x1010, 0x2000}, BranchSample::gap(0x2800), {0x2810, 0x3000},
                                       {0xffffffff81000000, 0x3004}, {0x3008, 0x4000}};
  const std::span<const BranchSample> all(s);
  for (bool delta : {true, false}) {
    const Blocks whole = blocks_from_samples(all, 0x4004, delta, 0x900);
    for (std::size_t split = 0; split <= s.size(); ++split) {
      CAPTURE(delta, split);
      CHECK(blocks_from_samples(all.first(split), all.subspan(split), 0x4004, delta, 0x900) == whole);
    }
  }
}
