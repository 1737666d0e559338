// RingBufferTracer: the BranchTracer of the software backends ("soft", "step"). They observe
// the thread's taken branches themselves and record() each one; reads come from a HistoryRing.
#pragma once

#include <string>

#include "tracer/btrace/branch_tracer.hpp"
#include "tracer/btrace/history_ring.hpp"

namespace tracer {

class RingBufferTracer final : public BranchTracer {
 public:
  // backend: the name stats() reports ("soft", "step"). The ring holds
  // config.bts_size / 24 samples (at least one), as a BTS buffer of that size would.
  RingBufferTracer(std::string backend, const BtraceConfig& config);

  // One taken branch in user space (btrace.md §10). A kernel `from` is kept in the ring, as
  // BTS would, but never shows up in a block. Each is stamped with the clock (a vDSO read,
  // nothing beside the ptrace stop a software collector pays per branch).
  void record(const BranchSample& sample);
  // One recorded by another, with no clock reading beside it (read_clock() brackets a batch).
  void record_unclocked(const BranchSample& sample) { ring_.push(sample); }
  void missed(std::uint64_t count) { ring_.missed(count); }
  void read_clock() { ring_.mark_time(monotonic_ns()); }

  base::Result<BtraceData> read(BtraceRead kind, Addr current_pc) override;
  // The requested size (at least one sample), as gdbserver reports the buffer it obtained.
  BtraceConfig conf() const override { return config_; }
  BtraceStats stats() const override;
  void new_reader() override { ring_.new_reader(); }
  base::Result<TimedBlocks> timed_history(Addr current_pc, std::uint64_t stopped_ns) override {
    return ring_.timed(current_pc, stopped_ns);
  }

  const HistoryRing& ring() const { return ring_; }

 private:
  std::string backend_;
  BtraceConfig config_;
  HistoryRing ring_;
};

}  // namespace tracer
