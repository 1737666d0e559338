// Where translated code lives: regions of RWX memory, each within reach of the program code it
// translates, so that an operand relative to rip in a copied instruction still reaches its
// target with a rebased 32-bit displacement (a program's own code and libc are further apart
// than that: one region each). Memory comes from mmap only: the translator may run while the
// program is inside malloc.
#pragma once

#include <cstddef>
#include <cstdint>

#include "tracer/inprocess/recorder/recorder_api.h"

namespace recorder {

inline constexpr std::size_t kRegionSize = HS_RECORDER_CACHE_REGION_BYTES;
inline constexpr std::uint64_t kRegionReach = 1ull << 30;  // a region serves code this close
inline constexpr std::size_t kMaxRegions = HS_RECORDER_MAX_CACHE_REGIONS;

class CodeCache {
 public:
  // Room for `bytes` of code near `near` (nullptr when no region could be mapped there).
  std::uint8_t* reserve(std::uint64_t near, std::size_t bytes);
  // Marks the code written since reserve() as used, up to `end`.
  void commit(std::uint8_t* end);
  std::size_t regions() const { return count_; }
  // Whether `address` is in one of the regions.
  bool contains(std::uint64_t address) const;
  // Empties every region, keeping it mapped (no thread may be in them).
  void clear();
  // Unmaps every region (no thread may be in them).
  void release();
  std::size_t used() const;
  // Where the server reads the regions (recorder_api.h: cache_regions, cache_region_count).
  std::uint64_t regions_address() const { return reinterpret_cast<std::uint64_t>(regions_); }
  std::uint64_t count_address() const { return reinterpret_cast<std::uint64_t>(&count_); }

 private:
  struct Region {
    std::uint8_t* base;
    std::uint8_t* cursor;
  };
  static_assert(sizeof(std::uint8_t*) == sizeof(std::uint64_t) && sizeof(std::size_t) == sizeof(std::uint64_t));
  Region* map_near(std::uint64_t near);
  Region regions_[kMaxRegions]{};
  std::size_t count_ = 0;
  Region* current_ = nullptr;
};

}  // namespace recorder
