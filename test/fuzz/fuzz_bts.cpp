// libFuzzer: a perf_event BTS data area as the kernel (or a broken kernel, or a ring copied
// while it moved) might leave it, decoded from any data_head and previous position. Anything
// but samples, a gap or a "lost" answer is a bug: crashes, reads outside the area, UB, hangs.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

#include "tracer/btrace/bts_decode.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 16) {
    return 0;
  }
  std::uint64_t head = 0;
  std::uint64_t since = 0;
  std::memcpy(&head, data, 8);
  std::memcpy(&since, data + 8, 8);
  // The data area is a power of two >= 8 bytes: the largest that fits in what is left.
  std::size_t area = 8;
  while (area * 2 <= size - 16) {
    area *= 2;
  }
  if (size - 16 < area) {
    return 0;
  }
  const auto decoded = tracer::decode_bts(std::span<const std::uint8_t>(data + 16, area), head, since);
  // Never more samples than whole records fit in the area.
  if (decoded.samples.size() > area / 24 + 1) {
    __builtin_trap();
  }
  return 0;
}
