// A map from one code address to another, for the recorder's own use: open addressing in
// mmap'ed memory (the recorder never allocates from the program's heap), keys never removed,
// 0 is no key. BlockMap keeps program address -> translation in one; SafePoints the way back.
#pragma once

#include <cstddef>
#include <cstdint>

namespace recorder {

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
  // Where its entries lie ({key, value}: recorder_api.h's hs_recorder_safe_point), and how many.
  std::uint64_t entries() const { return reinterpret_cast<std::uint64_t>(slots_); }
  std::size_t capacity() const { return capacity_; }

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
