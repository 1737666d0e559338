#include "tracer/inprocess/recorder/block_map.hpp"

#include <sys/mman.h>

namespace recorder {

bool BlockMap::init() {
  void* p = mmap(nullptr, kLookupEntries * sizeof(LookupEntry), PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED || !map_.init(kSlots)) {
    return false;
  }
  // (An empty entry is {0, 0}: a jump to address 0 "hits" it and jumps to 0, which faults
  // there as the program's own jump would. Left zero, the table costs no first touches.)
  lookup_ = static_cast<LookupEntry*>(p);
  return true;
}

void BlockMap::release() {
  map_.release();
  if (lookup_ != nullptr) {
    munmap(lookup_, kLookupEntries * sizeof(LookupEntry));
  }
  lookup_ = nullptr;
}

bool BlockMap::insert(std::uint64_t app, std::uint64_t cache) {
  if (!map_.insert(app, cache)) {
    return false;
  }
  remember(app, cache);
  return true;
}

void BlockMap::remember(std::uint64_t app, std::uint64_t cache) {
  lookup_[app & (kLookupEntries - 1)] = LookupEntry{app, cache};
}

}  // namespace recorder
