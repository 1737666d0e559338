// Which program address has which translation: the translator's complete map (AddressMap),
// shared by the process's threads, and the layout of the small direct-mapped table each thread
// has of its own, which its translated code probes inline for returns and indirect branches
// (LookupEntry, indexed by the target's low 16 bits; a miss goes to the dispatcher, which fills
// the thread's table: no thread ever reads an entry another is writing).
#pragma once

#include <cstddef>
#include <cstdint>

#include "tracer/inprocess/recorder/address_map.hpp"

namespace recorder {

struct LookupEntry {
  std::uint64_t app;    // the program address (0 when empty)
  std::uint64_t cache;  // where its translation starts
};
inline constexpr std::size_t kLookupEntries = 1u << 16;  // the index is the address's low 16 bits

class BlockMap {
 public:
  bool init() { return map_.init(kSlots); }  // false if mmap failed
  void release() { map_.release(); }
  void clear() { map_.clear(); }
  // The translation of `app`, 0 if none yet.
  std::uint64_t find(std::uint64_t app) const { return map_.find(app); }
  // Records a translation. False when the map is full.
  bool insert(std::uint64_t app, std::uint64_t cache) { return map_.insert(app, cache); }
  std::size_t size() const { return map_.size(); }
  std::size_t room() const { return map_.room(); }

 private:
  static constexpr std::size_t kSlots = 1u << 17;  // 64 Ki blocks at most (2 MiB, touched sparsely)
  AddressMap map_;
};

// A thread's inline table: mapped, and filled with one resolved target.
LookupEntry* map_lookup_table();
void unmap_lookup_table(LookupEntry* table);
void clear_lookup_table(LookupEntry* table);
inline void remember(LookupEntry* table, std::uint64_t app, std::uint64_t cache) {
  table[app & (kLookupEntries - 1)] = LookupEntry{app, cache};
}

}  // namespace recorder
