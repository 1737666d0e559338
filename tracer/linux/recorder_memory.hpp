// The in-process recorder's memory in the program, as the server reads and writes it: through a
// region it maps too where one covers the bytes (each thread's block and ring: a memcpy, no
// system call, and still readable once the program is gone), else through the program's memory,
// opened once (a JIT's flush made some hundred reads and writes, each opening /proc/PID/mem).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "base/result.hpp"
#include "tracer/linux/kernel.hpp"
#include "tracer/linux/shared_region.hpp"
#include "tracer/types.hpp"

namespace tracer {

class RecorderMemory {
 public:
  RecorderMemory(Kernel& kernel, Pid pid) : kernel_(&kernel), pid_(pid) {}

  // A region of the recorder's memory mapped here too (nullptr: none), read through from now on.
  void map_here(std::shared_ptr<const SharedRegion> region);

  base::Result<std::uint64_t> read_word(Addr addr);
  base::Result<void> read_bytes(Addr addr, void* out, std::size_t size);
  template <class T>
  base::Result<void> read_struct(Addr addr, T& out) {
    return read_bytes(addr, &out, sizeof out);
  }
  // Always into the program's memory (the regions here are read-only).
  base::Result<void> write_word(Addr addr, std::uint64_t value);

 private:
  // The program's memory, opened on first use (again when `reopen`: an access through it failed).
  base::Result<RawMemory*> program_memory(bool reopen = false);

  Kernel* kernel_;
  Pid pid_;
  std::shared_ptr<RawMemory> memory_;  // (a copy of the link shares it: a fork child's gets its own)
  std::vector<std::shared_ptr<const SharedRegion>> regions_;
};

}  // namespace tracer
