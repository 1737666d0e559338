#include "tracer/inprocess/recorder/block_map.hpp"

#include <sys/mman.h>

namespace recorder {

LookupEntry* map_lookup_table() {
  // (An empty entry is {0, 0}: a jump to address 0 "hits" it and jumps to 0, which faults
  // there as the program's own jump would. Left zero, the table costs no first touches.)
  void* p = mmap(nullptr, kLookupEntries * sizeof(LookupEntry), PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  return p == MAP_FAILED ? nullptr : static_cast<LookupEntry*>(p);
}

void unmap_lookup_table(LookupEntry* table) {
  if (table != nullptr) {
    munmap(table, kLookupEntries * sizeof(LookupEntry));
  }
}

void clear_lookup_table(LookupEntry* table) {
  if (table != nullptr) {
    madvise(table, kLookupEntries * sizeof(LookupEntry), MADV_DONTNEED);
  }
}

}  // namespace recorder
