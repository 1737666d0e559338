#include "tracer/inprocess/recorder/code_cache.hpp"

#include "tracer/inprocess/recorder/sys.hpp"

namespace recorder {
namespace {

std::uint64_t distance(std::uint64_t a, std::uint64_t b) {
  return a > b ? a - b : b - a;
}

constexpr std::size_t kSafePointBytes = kSafePointsPerRegion * sizeof(hs_recorder_safe_point);

void publish_count(std::uint64_t& count, std::uint64_t value) {
  __atomic_store_n(&count, value, __ATOMIC_RELEASE);  // (the entries below it are written)
}

}  // namespace

std::uint8_t* CodeCache::reserve(std::uint64_t near, std::size_t bytes, std::size_t safe_points) {
  current_ = nullptr;
  for (std::size_t i = 0; i < count_; ++i) {
    Region& r = regions_[i];
    const auto start = reinterpret_cast<std::uint64_t>(r.base);
    if (distance(start, near) < kRegionReach && distance(start + kRegionSize, near) < kRegionReach &&
        r.cursor + bytes <= r.base + kRegionSize && r.safe_point_count + safe_points <= kSafePointsPerRegion) {
      current_ = &r;
      break;
    }
  }
  if (current_ == nullptr) {
    current_ = map_near(near);
  }
  if (current_ == nullptr) {
    return nullptr;
  }
  // (Those of code made and not committed, or a translation given up, stand for nothing now.)
  forget_safe_points_from(*current_, reinterpret_cast<std::uint64_t>(current_->cursor));
  return current_->cursor;
}

bool CodeCache::add_safe_point(std::uint64_t cache, std::uint64_t app) {
  Region* r = current_;
  if (r == nullptr || cache < reinterpret_cast<std::uint64_t>(r->cursor) ||
      cache >= reinterpret_cast<std::uint64_t>(r->base) + kRegionSize) {
    return false;
  }
  forget_safe_points_from(*r, cache);
  if (r->safe_point_count == kSafePointsPerRegion) {
    return false;
  }
  r->safe_points[r->safe_point_count] = hs_recorder_safe_point{cache, app};
  publish_count(r->safe_point_count, r->safe_point_count + 1);
  return true;
}

void CodeCache::forget_safe_points_from(Region& r, std::uint64_t cache) {
  std::uint64_t n = r.safe_point_count;
  while (n > 0 && r.safe_points[n - 1].cache >= cache) {
    --n;
  }
  if (n != r.safe_point_count) {
    publish_count(r.safe_point_count, n);
  }
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
    Region& r = regions_[i];
    // (Only the pages its safe points were written on go back: a JIT's flushes come often.)
    const std::size_t used = (r.safe_point_count * sizeof(hs_recorder_safe_point) + 4095) & ~std::size_t{4095};
    r.cursor = r.base;
    r.safe_point_count = 0;
    sys::advise(r.safe_points, used, MADV_DONTNEED);  // private anonymous: zero again
  }
}

void CodeCache::release() {
  for (std::size_t i = 0; i < count_; ++i) {
    sys::unmap(regions_[i].base, kRegionSize);
    sys::unmap(regions_[i].safe_points, kSafePointBytes);
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
  void* safe_points =
      sys::map(nullptr, kSafePointBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE);
  if (safe_points == nullptr) {
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
        regions_[count_] = Region{base, base, static_cast<hs_recorder_safe_point*>(safe_points), 0};
        publish_count(count_, count_ + 1);
        return &regions_[count_ - 1];
      }
      if (got != nullptr) {
        sys::unmap(got, kRegionSize);  // (a kernel without MAP_FIXED_NOREPLACE took it as a hint)
      }
    }
  }
  sys::unmap(safe_points, kSafePointBytes);
  return nullptr;
}

}  // namespace recorder
