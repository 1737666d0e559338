#include "tracer/inprocess/recorder/block_map.hpp"

#include "tracer/inprocess/recorder/sys.hpp"

namespace recorder {

LookupEntry* map_lookup_table() {
  // (An empty entry is {0, 0}: a jump to address 0 "hits" it and jumps to 0, which faults
  // there as the program's own jump would. Left zero, the table costs no first touches.)
  return static_cast<LookupEntry*>(sys::map(nullptr, kLookupEntries * sizeof(LookupEntry), PROT_READ | PROT_WRITE,
                                            MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE));
}

void unmap_lookup_table(LookupEntry* table) {
  if (table != nullptr) {
    sys::unmap(table, kLookupEntries * sizeof(LookupEntry));
  }
}

void clear_lookup_table(LookupEntry* table) {
  if (table != nullptr) {
    sys::advise(table, kLookupEntries * sizeof(LookupEntry), MADV_DONTNEED);
  }
}

}  // namespace recorder
