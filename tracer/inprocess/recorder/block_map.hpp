// Which program address has which translation: the translator's complete map (AddressMap),
// and the small direct-mapped table the translated code probes inline for returns and indirect
// branches (LookupEntry, indexed by the target's low 16 bits; a miss goes to the dispatcher,
// which fills it).
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
  bool init();  // maps both tables; false if mmap failed
  void release();
  // The translation of `app`, 0 if none yet.
  std::uint64_t find(std::uint64_t app) const { return map_.find(app); }
  // Records a translation (the map and the inline table). False when the map is full.
  bool insert(std::uint64_t app, std::uint64_t cache);
  // The inline table alone (for a target the dispatcher resolved).
  void remember(std::uint64_t app, std::uint64_t cache);
  LookupEntry* lookup_table() const { return lookup_; }
  std::size_t size() const { return map_.size(); }

 private:
  static constexpr std::size_t kSlots = 1u << 17;  // 64 Ki blocks at most (2 MiB, touched sparsely)
  AddressMap map_;
  LookupEntry* lookup_ = nullptr;
};

}  // namespace recorder
