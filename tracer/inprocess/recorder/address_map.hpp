// A map from one code address to another, for the recorder's own use: open addressing in
// mmap'ed memory (the recorder never allocates from the program's heap), keys never removed,
// 0 is no key. BlockMap keeps program address -> translation in one.
#pragma once

#include <cstddef>
#include <cstdint>

namespace recorder {

// The slot of an open-addressing table of `slots` (a power of two) where the probe for `key`
// starts: the 64-byte piece the key is in picks a place (Fibonacci hashing), the key's place in
// the piece one of the 16 slots from there, so that keys made one after the other fill a few runs
// of slots, not a slot on a page of their own each.
inline std::uint64_t address_slot(std::uint64_t key, std::uint64_t slots) {
  return ((((key >> 6) * 0x9e3779b97f4a7c15ull) >> 40) + ((key >> 2) & 15)) & (slots - 1);
}

class AddressMap {
 public:
  // Maps room for `slots` keys (a power of two); false if mmap failed.
  bool init(std::size_t slots);
  void release();  // unmaps it
  void clear();    // forgets every key (the pages go back to the kernel)
  // The value of `key`, 0 if none.
  std::uint64_t find(std::uint64_t key) const;
  // Sets key's value. False when the map is half full.
  bool insert(std::uint64_t key, std::uint64_t value);
  std::size_t size() const { return size_; }
  // How many more keys insert() takes.
  std::size_t room() const { return capacity_ / 2 > size_ ? capacity_ / 2 - size_ : 0; }

 private:
  struct Entry {
    std::uint64_t key;
    std::uint64_t value;
  };
  Entry* slots_ = nullptr;
  std::size_t capacity_ = 0;
  std::size_t size_ = 0;
};

}  // namespace recorder
