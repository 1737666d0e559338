#include "tracer/linux/recorder_ring_access.hpp"

#include <algorithm>
#include <cstddef>

namespace tracer {

base::Result<hs_recorder_ring> ring_header(RecorderMemory& memory, Addr ring) {
  hs_recorder_ring header{};
  if (!memory.read_struct(ring, header)) {
    return base::make_error(base::Errc::failed, "the thread's ring could not be read");
  }
  const std::uint64_t c = header.capacity;
  if (c < HS_RECORDER_RING_MIN_CAPACITY || c > HS_RECORDER_RING_MAX_CAPACITY || (c & (c - 1)) != 0) {
    return base::make_error(base::Errc::failed, "the thread's ring is not a ring");
  }
  return header;
}

static_assert(sizeof(BranchSample) == sizeof(hs_recorder_sample) && offsetof(BranchSample, from) == 0 &&
              offsetof(BranchSample, to) == offsetof(hs_recorder_sample, to));

base::Result<std::vector<BranchSample>> ring_samples(RecorderMemory& memory, Addr ring, std::uint64_t skip,
                                                     std::uint64_t* head, std::uint64_t* lost) {
  auto header = ring_header(memory, ring);
  if (!header) {
    return header.error();
  }
  const std::uint64_t fresh = header->head - std::min(skip, header->head);
  const std::uint64_t n = std::min<std::uint64_t>(fresh, header->capacity);
  const auto samples = reinterpret_cast<Addr>(header->samples);
  std::vector<BranchSample> out(n);
  for (std::uint64_t done = 0; done < n;) {
    const std::uint64_t index = HS_RECORDER_RING_SLOT(header->head - n + done, header->capacity);
    const std::uint64_t run = std::min(n - done, header->capacity - index);
    if (!memory.read_bytes(samples + index * sizeof(hs_recorder_sample), &out[done], run * sizeof(BranchSample))) {
      return base::make_error(base::Errc::failed, "the thread's ring could not be read");
    }
    done += run;
  }
  *head = header->head;
  *lost = fresh - n;
  return out;
}

base::Result<void> ring_append(RecorderMemory& memory, Addr ring, const hs_recorder_sample& sample) {
  auto header = ring_header(memory, ring);
  if (!header) {
    return header.error();
  }
  const Addr at =
      reinterpret_cast<Addr>(header->samples) + HS_RECORDER_RING_SLOT(header->head, header->capacity) * sizeof sample;
  if (auto w = memory.write_word(at, sample.from); !w) {
    return w;
  }
  if (auto w = memory.write_word(at + 8, sample.to); !w) {
    return w;
  }
  return memory.write_word(ring + offsetof(hs_recorder_ring, head), header->head + 1);
}

base::Result<void> ring_drop_last(RecorderMemory& memory, Addr ring, std::uint64_t taken,
                                  const hs_recorder_sample& sample) {
  auto header = ring_header(memory, ring);
  if (!header) {
    return header.error();
  }
  if (header->head == 0 || header->head <= taken) {
    return base::success();  // (taken already: it stays)
  }
  const auto samples = reinterpret_cast<Addr>(header->samples);
  hs_recorder_sample last{};
  if (auto r = memory.read_struct(samples + HS_RECORDER_RING_SLOT(header->head - 1, header->capacity) * sizeof last,
                                  last);
      !r) {
    return r;
  }
  if (last.from != sample.from || last.to != sample.to) {
    return base::success();
  }
  return memory.write_word(ring + offsetof(hs_recorder_ring, head), header->head - 1);
}

}  // namespace tracer
