// A thread's history as the dbt recorder writes it (dbt_ring.h): GDB's reads answered from
// the recorder's ring, which the server only reads.
#pragma once

#include "tracer/btrace/branch_tracer.hpp"
#include "tracer/btrace/dbt_ring_reader.hpp"
#include "tracer/btrace/history_ring.hpp"

namespace tracer {

class DbtTracer final : public BranchTracer {
 public:
  explicit DbtTracer(DbtRing ring) : ring_(std::move(ring)) {}

  base::Result<BtraceData> read(BtraceRead kind, Addr current_pc) override;
  // The recorder's ring, whatever GDB asked for: its size was fixed when the program started.
  BtraceConfig conf() const override { return BtraceConfig{ring_.capacity() * kBtsSampleBytes}; }
  BtraceStats stats() const override;
  void new_reader() override { cursor_.new_reader(); }

  const DbtRing& ring() const { return ring_; }

 private:
  DbtRing ring_;
  BtraceCursor cursor_;
};

}  // namespace tracer
