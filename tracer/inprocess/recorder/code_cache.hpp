// Where translated code lives: regions of RWX memory, each within reach of the program code it
// translates, so that an operand relative to rip in a copied instruction still reaches its
// target with a rebased 32-bit displacement (a program's own code and libc are further apart
// than that: one region each). Each region keeps its safe points (recorder_api.h): which program
// address each place in its code stands for, appended in the order the code is made, so in
// ascending order (the server finds one by binary search). Memory comes from mmap only: the
// translator may run while the program is inside malloc.
#pragma once

#include <cstddef>
#include <cstdint>

#include "tracer/inprocess/recorder/recorder_api.h"

namespace recorder {

inline constexpr std::size_t kRegionSize = HS_RECORDER_CACHE_REGION_BYTES;
inline constexpr std::uint64_t kRegionReach = 1ull << 30;  // a region serves code this close
inline constexpr std::size_t kMaxRegions = HS_RECORDER_MAX_CACHE_REGIONS;
// A region's room for safe points: one per 16 bytes of code (code made for a program start-up
// has one per 40); a region whose room is used up takes no more code.
inline constexpr std::size_t kSafePointsPerRegion = kRegionSize / 16;

class CodeCache {
 public:
  // Room for `bytes` of code and `safe_points` safe points near `near` (nullptr when no region
  // could be mapped there).
  std::uint8_t* reserve(std::uint64_t near, std::size_t bytes, std::size_t safe_points);
  // Marks the code written since reserve() as used, up to `end`.
  void commit(std::uint8_t* end);
  // Says that the code at `cache`, written since reserve(), stands for program address `app`
  // (a later safe point at the same place or before it replaces those from there on: the
  // translator went back). False if reserve() gave no room for it.
  bool add_safe_point(std::uint64_t cache, std::uint64_t app);
  std::size_t regions() const { return count_; }
  // Whether `address` is in one of the regions.
  bool contains(std::uint64_t address) const;
  // Empties every region and its safe points, keeping it mapped (no thread may be in them).
  void clear();
  // Unmaps every region (no thread may be in them).
  void release();
  std::size_t used() const;
  // Where the server reads the regions (recorder_api.h: cache_regions, cache_region_count).
  std::uint64_t regions_address() const { return reinterpret_cast<std::uint64_t>(regions_); }
  std::uint64_t count_address() const { return reinterpret_cast<std::uint64_t>(&count_); }

 private:
  struct Region {  // as the server reads it: hs_recorder_cache_region
    std::uint8_t* base;
    std::uint8_t* cursor;
    hs_recorder_safe_point* safe_points;
    std::uint64_t safe_point_count;  // written after its entry (the server reads it first)
  };
  static_assert(sizeof(Region) == sizeof(hs_recorder_cache_region) && sizeof(std::size_t) == sizeof(std::uint64_t));
  static void forget_safe_points_from(Region& r, std::uint64_t cache);
  Region* map_near(std::uint64_t near);
  Region regions_[kMaxRegions]{};
  std::size_t count_ = 0;
  Region* current_ = nullptr;
};

}  // namespace recorder
