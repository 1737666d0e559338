#include "tracer/btrace/dbt_tracer.hpp"

namespace tracer {

base::Result<BtraceData> DbtTracer::read(BtraceRead kind, Addr current_pc) {
  // The thread is stopped while GDB reads, so head stays put; samples the recorder had
  // overwritten are simply not there (a delta that needed them is an overflow).
  const std::uint64_t head = ring_.head() - base_;
  std::vector<BranchSample> copy;
  return cursor_.read(kind, current_pc, head, ring_.capacity(), [&](std::uint64_t since) {
    copy = ring_.samples_since(base_ + since);
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
  s.backend = "dbt";
  s.capacity = ring_.capacity();
  s.recorded = ring_.head() - base_;
  s.kept = s.recorded < s.capacity ? s.recorded : s.capacity;
  s.lost = s.recorded - s.kept;
  s.gaps = ring_.gaps();
  return s;
}

}  // namespace tracer
