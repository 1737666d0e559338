// A thread's history as the dbt recorder writes it (dbt_ring.h): GDB's reads answered from
// the recorder's ring, which the server only reads. The recorder records from the thread's
// first instruction; what GDB sees begins where it started recording (the ring's head then).
#pragma once

#include "tracer/btrace/branch_tracer.hpp"
#include "tracer/btrace/dbt_ring_reader.hpp"
#include "tracer/btrace/history_ring.hpp"

namespace tracer {

class DbtTracer final : public BranchTracer {
 public:
  // from_birth: the thread was born while its process recorded; its history starts with it,
  // and GDB, whose view of the thread began later, reads it all (the first delta overflows).
  explicit DbtTracer(DbtRing ring, bool from_birth = false)
      : ring_(std::move(ring)), base_(from_birth ? 0 : ring_.head()) {
    if (from_birth) {
      cursor_.new_reader();
    }
  }

  base::Result<BtraceData> read(BtraceRead kind, Addr current_pc) override;
  // The recorder's ring, whatever GDB asked for: its size was fixed when the program started.
  BtraceConfig conf() const override { return BtraceConfig{ring_.capacity() * kBtsSampleBytes}; }
  BtraceStats stats() const override;
  void new_reader() override { cursor_.new_reader(); }
  base::Result<TimedBlocks> timed_history(Addr current_pc, std::uint64_t stopped_ns) override;

  const DbtRing& ring() const { return ring_; }

 private:
  DbtRing ring_;
  std::uint64_t base_;  // the ring's head when recording began: sample n is GDB's n - base_
  BtraceCursor cursor_;
};

}  // namespace tracer
