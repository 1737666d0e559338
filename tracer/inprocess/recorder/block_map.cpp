#include "tracer/inprocess/recorder/block_map.hpp"

#include <sys/mman.h>

namespace recorder {
namespace {

std::size_t slot_of(std::uint64_t app, std::size_t slots) {
  return static_cast<std::size_t>((app * 0x9e3779b97f4a7c15ull) >> 40) & (slots - 1);
}

void* map_zeroed(std::size_t bytes) {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  return p == MAP_FAILED ? nullptr : p;
}

}  // namespace

bool BlockMap::init() {
  slots_ = static_cast<LookupEntry*>(map_zeroed(kSlots * sizeof(LookupEntry)));
  lookup_ = static_cast<LookupEntry*>(map_zeroed(kLookupEntries * sizeof(LookupEntry)));
  if (slots_ == nullptr || lookup_ == nullptr) {
    return false;
  }
  // (An empty entry is {0, 0}: a jump to address 0 "hits" it and jumps to 0, which faults
  // there as the program's own jump would. Left zero, the table costs no first touches.)
  return true;
}

std::uint64_t BlockMap::find(std::uint64_t app) const {
  for (std::size_t i = slot_of(app, kSlots);; i = (i + 1) & (kSlots - 1)) {
    if (slots_[i].app == app) {
      return slots_[i].cache;
    }
    if (slots_[i].app == 0) {
      return 0;
    }
  }
}

bool BlockMap::insert(std::uint64_t app, std::uint64_t cache) {
  if (size_ >= kSlots / 2) {
    return false;
  }
  std::size_t i = slot_of(app, kSlots);
  while (slots_[i].app != 0 && slots_[i].app != app) {
    i = (i + 1) & (kSlots - 1);
  }
  size_ += slots_[i].app == 0 ? 1 : 0;
  slots_[i] = LookupEntry{app, cache};
  remember(app, cache);
  return true;
}

void BlockMap::remember(std::uint64_t app, std::uint64_t cache) {
  lookup_[app & (kLookupEntries - 1)] = LookupEntry{app, cache};
}

}  // namespace recorder
