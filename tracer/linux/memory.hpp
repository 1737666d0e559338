// Raw inferior memory: process_vm_readv for reads, /proc/PID/mem for what it refuses and
// for writes (text pages are read-only, the kernel's FOLL_FORCE path writes them anyway).
#pragma once

#include <cstddef>
#include <cstdint>

#include "base/result.hpp"
#include "tracer/types.hpp"

namespace tracer {

class ProcessMemory {
 public:
  ProcessMemory() = default;
  ~ProcessMemory() { close(); }
  ProcessMemory(const ProcessMemory&) = delete;
  ProcessMemory& operator=(const ProcessMemory&) = delete;

  // Opens /proc/PID/mem (again after an exec: the old file still shows the old image).
  base::Result<void> open(Pid pid);
  void close();
  bool is_open() const { return pid_ != 0; }

  // The readable prefix of [addr, addr + len); an error if not even the first byte is.
  base::Result<Bytes> read(Addr addr, std::size_t len) const;
  // All of data or an error.
  base::Result<void> write(Addr addr, const Bytes& data) const;
  // Puts original back where one of our int3s is; where the byte is no longer an int3 (the
  // program rewrote its code, a library was mapped there again) nothing is ours to undo.
  base::Result<void> restore_int3(Addr addr, std::uint8_t original) const;

 private:
  Pid pid_ = 0;
  int fd_ = -1;
};

// Up to 8 bytes read from the inferior as the little-endian value they hold (zero-extended).
inline std::uint64_t load_u64(const Bytes& bytes) {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < bytes.size() && i < sizeof v; ++i) {
    v |= std::uint64_t{bytes[i]} << (8 * i);
  }
  return v;
}

}  // namespace tracer
