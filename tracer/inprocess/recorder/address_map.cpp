#include "tracer/inprocess/recorder/address_map.hpp"

#include "tracer/inprocess/recorder/sys.hpp"

namespace recorder {

bool AddressMap::init(std::size_t slots) {
  const std::size_t bytes = slots * sizeof(Entry);
  void* p = bytes % (2u << 20) == 0
                ? sys::map_huge_table(bytes)
                : sys::map(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE);
  if (p == nullptr) {
    return false;
  }
  slots_ = static_cast<Entry*>(p);
  capacity_ = slots;
  size_ = 0;
  return true;
}

void AddressMap::release() {
  if (slots_ != nullptr) {
    sys::unmap(slots_, capacity_ * sizeof(Entry));
  }
  slots_ = nullptr;
  capacity_ = size_ = 0;
}

void AddressMap::clear() {
  if (slots_ != nullptr) {
    sys::advise(slots_, capacity_ * sizeof(Entry), MADV_DONTNEED);  // private anonymous: zero again
  }
  size_ = 0;
}

std::uint64_t AddressMap::find(std::uint64_t key) const {
  for (std::size_t i = static_cast<std::size_t>(address_slot(key, capacity_));; i = (i + 1) & (capacity_ - 1)) {
    if (slots_[i].key == key) {
      return slots_[i].value;
    }
    if (slots_[i].key == 0) {
      return 0;
    }
  }
}

bool AddressMap::insert(std::uint64_t key, std::uint64_t value) {
  if (size_ >= capacity_ / 2) {
    return false;
  }
  std::size_t i = static_cast<std::size_t>(address_slot(key, capacity_));
  while (slots_[i].key != 0 && slots_[i].key != key) {
    i = (i + 1) & (capacity_ - 1);
  }
  size_ += slots_[i].key == 0 ? 1 : 0;
  slots_[i] = Entry{key, value};
  return true;
}

}  // namespace recorder
