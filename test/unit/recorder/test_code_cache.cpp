// The code cache's safe points: appended as code is made, in ascending order, as the server's
// binary search (RecorderLink::app_address) reads them from the region's description.
#include <catch2/catch.hpp>

#include <cstdint>
#include <vector>

#include "tracer/inprocess/recorder/code_cache.hpp"

namespace {

std::uint64_t here() {
  return reinterpret_cast<std::uint64_t>(&here);
}

// The regions as the server reads them.
std::vector<hs_recorder_cache_region> regions(const recorder::CodeCache& cache) {
  const auto* first = reinterpret_cast<const hs_recorder_cache_region*>(cache.regions_address());
  const auto count = *reinterpret_cast<const std::uint64_t*>(cache.count_address());
  return {first, first + count};
}

// Room near this test's code, and the address it starts at.
std::uint8_t* reserve_near_here(recorder::CodeCache& cache, std::size_t bytes, std::size_t safe_points) {
  std::uint8_t* at = cache.reserve(here(), bytes, safe_points);
  REQUIRE(at != nullptr);
  return at;
}

std::vector<hs_recorder_safe_point> safe_points(const hs_recorder_cache_region& region) {
  const auto* first = reinterpret_cast<const hs_recorder_safe_point*>(region.safe_points);
  return {first, first + region.safe_point_count};
}

}  // namespace

TEST_CASE("code cache: safe points are appended in ascending order; one made again at a place forgets those past it",
          "[recorder]") {
  recorder::CodeCache cache;
  const auto base = reinterpret_cast<std::uint64_t>(reserve_near_here(cache, 64, 8));
  REQUIRE(cache.add_safe_point(base, 0x1000));
  REQUIRE(cache.add_safe_point(base + 5, 0x1003));
  REQUIRE(cache.add_safe_point(base + 9, 0x1007));
  // The translator went back to base + 5 (a relocation given up): what was past it stands for nothing.
  REQUIRE(cache.add_safe_point(base + 5, 0x1003));
  REQUIRE(cache.add_safe_point(base + 7, 0x1010));
  auto now = regions(cache);
  REQUIRE(now.size() == 1);
  const auto points = safe_points(now[0]);
  REQUIRE(points.size() == 3);
  CHECK(points[0].cache == base);
  CHECK(points[1].cache == base + 5);
  CHECK(points[1].app == 0x1003);
  CHECK(points[2].cache == base + 7);
  CHECK(points[2].app == 0x1010);
  // Before the place reserve() gave, or with no reservation's region: refused.
  CHECK_FALSE(cache.add_safe_point(base - 1, 0x2000));
  cache.release();
}

TEST_CASE("code cache: a reservation forgets the safe points of code made and not committed; a flush forgets all",
          "[recorder]") {
  recorder::CodeCache cache;
  std::uint8_t* at = reserve_near_here(cache, 64, 8);
  const auto base = reinterpret_cast<std::uint64_t>(at);
  REQUIRE(cache.add_safe_point(base, 0x1000));
  cache.commit(at + 4);
  REQUIRE(cache.add_safe_point(base + 8, 0x1004));  // (a block given up: never committed)
  std::uint8_t* next = cache.reserve(here(), 64, 8);
  CHECK(next == at + 4);
  auto points = safe_points(regions(cache)[0]);
  REQUIRE(points.size() == 1);
  CHECK(points[0].app == 0x1000);
  cache.clear();
  CHECK(regions(cache)[0].safe_point_count == 0);
  CHECK(regions(cache)[0].cursor == regions(cache)[0].base);
  cache.release();
}

TEST_CASE("code cache: a region whose safe points are used up takes no more code", "[recorder]") {
  recorder::CodeCache cache;
  std::uint8_t* at = reserve_near_here(cache, 16, recorder::kSafePointsPerRegion);
  const auto base = reinterpret_cast<std::uint64_t>(at);
  for (std::uint64_t i = 0; i < 4; ++i) {
    REQUIRE(cache.add_safe_point(base + i, 0x1000 + i));
  }
  cache.commit(at + 4);
  // Room for 4 fewer than a whole region's: the next reservation asking for all of it goes elsewhere.
  std::uint8_t* other = cache.reserve(here(), 16, recorder::kSafePointsPerRegion);
  if (other != nullptr) {
    CHECK(cache.regions() == 2);
    CHECK(other != at + 4);
  }
  CHECK(cache.reserve(here(), 16, 8) == at + 4);
  cache.release();
}
