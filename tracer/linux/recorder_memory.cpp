#include "tracer/linux/recorder_memory.hpp"

#include <algorithm>
#include <cstring>

namespace tracer {

void RecorderMemory::map_here(std::shared_ptr<const SharedRegion> region) {
  if (region && std::find(regions_.begin(), regions_.end(), region) == regions_.end()) {
    regions_.push_back(std::move(region));
  }
}

base::Result<std::uint64_t> RecorderMemory::read_word(Addr addr) {
  std::uint64_t v = 0;
  if (auto r = read_bytes(addr, &v, sizeof v); !r) {
    return r.error();
  }
  return v;
}

base::Result<void> RecorderMemory::read_bytes(Addr addr, void* out, std::size_t size) {
  for (const auto& region : regions_) {
    if (region->contains(addr, size)) {
      return region->read_into(addr, out, size);
    }
  }
  auto memory = kernel_->memory(pid_);
  if (!memory) {
    return memory.error();
  }
  auto bytes = (*memory)->read(addr, size);
  if (!bytes || bytes->size() != size) {
    return base::make_error(base::Errc::failed, "the recorder's memory could not be read");
  }
  std::memcpy(out, bytes->data(), size);
  return base::success();
}

base::Result<void> RecorderMemory::write_word(Addr addr, std::uint64_t value) {
  auto memory = kernel_->memory(pid_);
  if (!memory) {
    return memory.error();
  }
  Bytes bytes(8);
  std::memcpy(bytes.data(), &value, 8);
  return (*memory)->write(addr, bytes);
}

}  // namespace tracer
