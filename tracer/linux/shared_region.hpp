// A piece of a traced program's memory that the program maps from a memfd, mapped here too
// (read-only) through /proc/PID/fd/N while the program holds that descriptor: read with a
// memcpy, no system call, and still readable once the program is gone (the in-process
// recorder's thread blocks and rings, recorder_api.h).
#pragma once

#include <cstddef>
#include <memory>

#include "base/result.hpp"
#include "tracer/linux/memory.hpp"
#include "tracer/types.hpp"

namespace tracer {

class SharedRegion final : public RawMemory {
 public:
  // pid's descriptor fd, which it maps at `base` for `size` bytes, mapped here.
  static base::Result<std::shared_ptr<SharedRegion>> map(Pid pid, int fd, Addr base, std::size_t size);
  ~SharedRegion() override;
  SharedRegion(const SharedRegion&) = delete;
  SharedRegion& operator=(const SharedRegion&) = delete;

  bool contains(Addr addr, std::size_t len) const { return addr >= base_ && len <= size_ && addr - base_ <= size_ - len; }
  // Within the region only (an error elsewhere).
  base::Result<Bytes> read(Addr addr, std::size_t len) const override;
  base::Result<void> read_into(Addr addr, void* out, std::size_t len) const;
  // Never: the region is mapped read-only here (the program writes it).
  base::Result<void> write(Addr addr, const Bytes& data) const override;

 private:
  SharedRegion(const void* local, Addr base, std::size_t size) : local_(local), base_(base), size_(size) {}
  const void* local_;
  Addr base_;
  std::size_t size_;
};

}  // namespace tracer
