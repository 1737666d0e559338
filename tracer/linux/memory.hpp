// Raw inferior memory: process_vm_readv for reads, /proc/PID/mem for what it refuses and
// for writes (text pages are read-only, the kernel's FOLL_FORCE path writes them anyway).
#pragma once

#include <cstddef>
#include <cstdint>

#include "base/result.hpp"
#include "tracer/types.hpp"

namespace tracer {

// Inferior memory as it is: ProcessMemory, or a vector in tests (code_memory.hpp reads and
// writes through it).
class RawMemory {
 public:
  virtual ~RawMemory() = default;
  // The readable prefix of [addr, addr + len); an error if not even the first byte is.
  virtual base::Result<Bytes> read(Addr addr, std::size_t len) const = 0;
  // All of data or an error.
  virtual base::Result<void> write(Addr addr, const Bytes& data) const = 0;
};

class ProcessMemory final : public RawMemory {
 public:
  ProcessMemory() = default;
  ~ProcessMemory() override { close(); }
  ProcessMemory(const ProcessMemory&) = delete;
  ProcessMemory& operator=(const ProcessMemory&) = delete;

  // Opens /proc/PID/mem (again after an exec: the old file still shows the old image).
  base::Result<void> open(Pid pid);
  void close();
  bool is_open() const { return pid_ != 0; }

  base::Result<Bytes> read(Addr addr, std::size_t len) const override;
  base::Result<void> write(Addr addr, const Bytes& data) const override;

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
