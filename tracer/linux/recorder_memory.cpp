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
  for (bool reopen : {false, true}) {
    auto memory = program_memory(reopen);
    if (!memory) {
      return memory.error();
    }
    auto bytes = (*memory)->read(addr, size);
    if (bytes && bytes->size() == size) {
      std::memcpy(out, bytes->data(), size);
      return base::success();
    }
  }
  return base::make_error(base::Errc::failed, "the recorder's memory could not be read");
}

base::Result<void> RecorderMemory::write_word(Addr addr, std::uint64_t value) {
  Bytes bytes(8);
  std::memcpy(bytes.data(), &value, 8);
  base::Result<void> written = base::success();
  for (bool reopen : {false, true}) {
    auto memory = program_memory(reopen);
    if (!memory) {
      return memory.error();
    }
    written = (*memory)->write(addr, bytes);
    if (written) {
      break;
    }
  }
  return written;
}

base::Result<RawMemory*> RecorderMemory::program_memory(bool reopen) {
  if (memory_ == nullptr || reopen) {
    auto opened = kernel_->memory(pid_);
    if (!opened) {
      return opened.error();
    }
    memory_ = std::move(*opened);
  }
  return memory_.get();
}

}  // namespace tracer
