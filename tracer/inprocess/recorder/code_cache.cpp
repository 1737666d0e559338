#include "tracer/inprocess/recorder/code_cache.hpp"

#include "tracer/inprocess/recorder/sys.hpp"

namespace recorder {
namespace {

std::uint64_t distance(std::uint64_t a, std::uint64_t b) {
  return a > b ? a - b : b - a;
}

}  // namespace

std::uint8_t* CodeCache::reserve(std::uint64_t near, std::size_t bytes) {
  current_ = nullptr;
  for (std::size_t i = 0; i < count_; ++i) {
    Region& r = regions_[i];
    const auto start = reinterpret_cast<std::uint64_t>(r.base);
    if (distance(start, near) < kRegionReach && distance(start + kRegionSize, near) < kRegionReach &&
        r.cursor + bytes <= r.base + kRegionSize) {
      current_ = &r;
      break;
    }
  }
  if (current_ == nullptr) {
    current_ = map_near(near);
  }
  return current_ != nullptr ? current_->cursor : nullptr;
}

void CodeCache::commit(std::uint8_t* end) {
  if (current_ != nullptr) {
    current_->cursor = end;
  }
}

bool CodeCache::contains(std::uint64_t address) const {
  for (std::size_t i = 0; i < count_; ++i) {
    const auto base = reinterpret_cast<std::uint64_t>(regions_[i].base);
    if (address >= base && address < base + kRegionSize) {
      return true;
    }
  }
  return false;
}

void CodeCache::clear() {
  for (std::size_t i = 0; i < count_; ++i) {
    regions_[i].cursor = regions_[i].base;
  }
}

void CodeCache::release() {
  for (std::size_t i = 0; i < count_; ++i) {
    sys::unmap(regions_[i].base, kRegionSize);
  }
  count_ = 0;
  current_ = nullptr;
}

std::size_t CodeCache::used() const {
  std::size_t n = 0;
  for (std::size_t i = 0; i < count_; ++i) {
    n += static_cast<std::size_t>(regions_[i].cursor - regions_[i].base);
  }
  return n;
}

// A free area one region-size step after another away from `near`, below then above (as the
// agent places its jump pads: tracer/inprocess/agent.cpp).
CodeCache::Region* CodeCache::map_near(std::uint64_t near) {
  if (count_ == kMaxRegions) {
    return nullptr;
  }
  const std::uint64_t aligned = near & ~static_cast<std::uint64_t>(kRegionSize - 1);
  for (std::uint64_t step = 1; step * kRegionSize < kRegionReach - kRegionSize; ++step) {
    for (int side = 0; side < 2; ++side) {
      const std::uint64_t offset = step * kRegionSize;
      if (side == 0 && aligned < offset + 0x10000) {
        continue;
      }
      const std::uint64_t want = side == 0 ? aligned - offset : aligned + offset;
      void* got = sys::map(reinterpret_cast<void*>(want), kRegionSize, PROT_READ | PROT_WRITE | PROT_EXEC,
                           MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE);
      if (got == reinterpret_cast<void*>(want)) {
        auto* base = static_cast<std::uint8_t*>(got);
        regions_[count_] = Region{base, base};
        return &regions_[count_++];
      }
      if (got != nullptr) {
        sys::unmap(got, kRegionSize);  // (a kernel without MAP_FIXED_NOREPLACE took it as a hint)
      }
    }
  }
  return nullptr;
}

}  // namespace recorder
