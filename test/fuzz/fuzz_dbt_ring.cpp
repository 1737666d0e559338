// libFuzzer: a dbt ring file (tracer/btrace/dbt_ring.h) as a program could leave it: the
// recorder writes it inside the traced process, whose bugs may scribble on the mapping. The
// server maps it and reads samples from any position, and its clock readings. Anything but samples or a refusal is a
// bug: crashes, reads outside the file, UB, hangs.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "test/fuzz/input_file.hpp"
#include "tracer/btrace/dbt_ring_reader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 8) {
    return 0;
  }
  std::uint64_t since = 0;
  std::memcpy(&since, data, 8);
  const std::string path = fuzz::write_input("ring", data + 8, size - 8);
  if (path.empty()) {
    return 0;
  }
  auto ring = tracer::DbtRing::open(path);
  if (ring) {
    std::uint64_t lost = 0;
    const auto samples = ring->samples_since(since, &lost);
    if (samples.size() > ring->capacity()) {
      __builtin_trap();
    }
    (void)ring->gaps();
    (void)ring->exited();
    const auto marks = ring->time_marks();
    for (std::size_t i = 1; i < marks.size(); ++i) {
      if (marks[i].position < marks[i - 1].position || marks[i].t_ns < marks[i - 1].t_ns) {
        __builtin_trap();  // the reader promises readings in order
      }
    }
  }
  return 0;
}
