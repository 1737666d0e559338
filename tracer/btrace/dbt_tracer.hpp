// A thread's history as the dbt recorder writes it (dbt_ring.h): GDB's reads answered from
// the recorder's ring, which the server only reads. The recorder records from the thread's
// first instruction; what GDB sees begins where it started recording (the ring's head then)
// and holds the newest branches that fit GDB's buffer size (24 bytes each, as a BTS record),
// as with any other collector: the recorder's ring is sized when the program starts.
#pragma once

#include <optional>

#include "tracer/btrace/branch_tracer.hpp"
#include "tracer/btrace/dbt_ring_reader.hpp"
#include "tracer/btrace/history_ring.hpp"

namespace tracer {

class DbtTracer final : public BranchTracer {
 public:
  // from_birth: the thread was born while its process recorded; its history starts with it,
  // and GDB, whose view of the thread began later, reads it all (the first delta overflows).
  // config: GDB's buffer (no config: all the ring holds).
  explicit DbtTracer(DbtRing ring, bool from_birth = false, std::optional<BtraceConfig> config = std::nullopt);

  base::Result<BtraceData> read(BtraceRead kind, Addr current_pc) override;
  // GDB's buffer size, or what the recorder's ring holds when that is less.
  BtraceConfig conf() const override { return BtraceConfig{conf_bytes_}; }
  BtraceStats stats() const override;
  void new_reader() override { cursor_.new_reader(); }
  base::Result<TimedBlocks> timed_history(Addr current_pc, std::uint64_t stopped_ns) override;

  const DbtRing& ring() const { return ring_; }

 private:
  DbtRing ring_;
  std::uint64_t base_;    // the ring's head when recording began: sample n is GDB's n - base_
  std::uint64_t conf_bytes_;  // GDB's buffer size, at most the ring's (in BTS bytes)
  std::uint64_t window_;      // the newest samples GDB may see: conf_bytes_ / 24
  BtraceCursor cursor_;
};

}  // namespace tracer
