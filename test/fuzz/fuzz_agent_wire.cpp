// libFuzzer: the in-process agent's ring as the server reads it out of the program
// (tracer/trace/agent_wire): the agent writes it inside the traced process, whose bugs may
// scribble on it, and the server reads [tail, head) at any positions. Also the tracepoint
// list the agent reads. Anything but records or an error is a bug: crashes, reads outside
// the ring, UB, hangs; and every record read must fit in the bytes it came from.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

#include "tracer/trace/agent_wire.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 16) {
    return 0;
  }
  std::uint64_t tail = 0;
  std::uint64_t head = 0;
  std::memcpy(&tail, data, 8);
  std::memcpy(&head, data + 8, 8);
  const std::span<const std::uint8_t> ring(data + 16, (size - 16) & ~std::size_t{7});
  auto records = tracer::trace::read_records(ring, tail, head);
  if (records) {
    std::size_t bytes = 0;
    for (const auto& rec : *records) {
      bytes += tracer::trace::kRecordHeader + rec.save_area.size();
      for (const auto& b : rec.memory) {
        bytes += b.bytes.size();
      }
    }
    if (bytes > head - tail) {
      __builtin_trap();  // more than the ring held
    }
  }
  (void)tracer::trace::decode_agent_tracepoints(std::span<const std::uint8_t>(data + 16, size - 16));
  return 0;
}
