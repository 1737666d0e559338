// RingBufferTracer: a HistoryRing behind the BranchTracer interface.
#include "tracer/btrace/ring_buffer_tracer.hpp"

#include <algorithm>
#include <utility>

namespace tracer {

RingBufferTracer::RingBufferTracer(std::string backend, const BtraceConfig& config)
    : backend_(std::move(backend)), config_(config), ring_(config.bts_size) {
  config_.bts_size = std::max(config_.bts_size, kBtsSampleBytes);
  ring_.mark_time(monotonic_ns());  // tracing starts: the first branch is later
}

void RingBufferTracer::record(const BranchSample& sample) {
  ring_.push(sample);
  ring_.mark_time(monotonic_ns());
}

base::Result<BtraceData> RingBufferTracer::read(BtraceRead kind, Addr current_pc) {
  return ring_.read(kind, current_pc);
}

BtraceStats RingBufferTracer::stats() const {
  BtraceStats s = ring_.stats();
  s.backend = backend_;
  return s;
}

}  // namespace tracer
