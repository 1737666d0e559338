#include "tracer/btrace/dbt_tracer.hpp"

#include <algorithm>

#include "tracer/backend.hpp"

namespace tracer {

DbtTracer::DbtTracer(DbtRing ring, bool from_birth, std::optional<BtraceConfig> config)
    : ring_(std::move(ring)), base_(from_birth ? 0 : ring_.head()) {
  const std::uint64_t ring_bytes = ring_.capacity() * kBtsSampleBytes;
  conf_bytes_ = config ? std::min(config->bts_size, ring_bytes) : ring_bytes;
  window_ = std::max<std::uint64_t>(conf_bytes_ / kBtsSampleBytes, 1);
  if (from_birth) {
    cursor_.new_reader();
  }
}

base::Result<BtraceData> DbtTracer::read(BtraceRead kind, Addr current_pc) {
  // The thread is stopped while GDB reads, so head stays put; samples older than GDB's
  // buffer, or that the recorder had overwritten, are not there (a delta that needed them is
  // an overflow).
  const std::uint64_t head = ring_.head() - base_;
  const std::uint64_t oldest = head > window_ ? head - window_ : 0;
  std::vector<BranchSample> copy;
  return cursor_.read(kind, current_pc, head, window_, [&](std::uint64_t since) {
    copy = ring_.samples_since(base_ + std::max(since, oldest));
    return BtraceCursor::Pieces{std::span<const BranchSample>(copy), {}};
  });
}

base::Result<TimedBlocks> DbtTracer::timed_history(Addr current_pc, std::uint64_t stopped_ns) {
  // The thread is stopped: the copy ends at head.
  const std::vector<BranchSample> copy = ring_.samples_since(base_);
  const std::uint64_t head = ring_.head();
  std::vector<TimeMark> marks = ring_.time_marks();
  add_stop_mark(marks, head, stopped_ns);
  return timed_blocks(copy, {}, head - copy.size(), current_pc, marks);
}

BtraceStats DbtTracer::stats() const {
  BtraceStats s;
  s.backend = backend_name(Backend::Dbt);
  s.capacity = ring_.capacity();
  s.recorded = ring_.head() - base_;
  s.kept = s.recorded < s.capacity ? s.recorded : s.capacity;
  s.lost = s.recorded - s.kept;
  s.gaps = ring_.gaps();
  return s;
}

}  // namespace tracer
