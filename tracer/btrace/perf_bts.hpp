// PerfBts: branch tracing with Intel BTS through perf_event, as gdbserver does it
// (btrace.md §9). One per thread; the kernel fills the ring while the thread runs.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "base/result.hpp"
#include "tracer/btrace/branch_tracer.hpp"
#include "tracer/btrace/perf_event.hpp"
#include "tracer/types.hpp"

namespace tracer {

struct CpuIdentity {
  std::string vendor;   // CPUID leaf 0: "GenuineIntel", "AuthenticAMD", ...
  unsigned family = 0;  // with the extended family folded in
  unsigned model = 0;   // with the extended model folded in (families 6 and 15)
};

// This CPU, from CPUID leaves 0 and 1.
CpuIdentity host_cpu();

// btrace.md §9.1: BTS only on Intel, and not on the family 6 models hit by erratum AAJ122.
// The error says why, in words a user can act on.
base::Result<void> bts_cpu_check(const CpuIdentity& cpu);

class PerfBts final : public BranchTracer {
 public:
  explicit PerfBts(PerfEvent event);

  // qXfer:btrace:read over the kernel's ring: copy, walk back from data_head (§9.4).
  base::Result<BtraceData> read(BtraceRead kind, Addr current_pc) override;
  // The data area really obtained (a power-of-two number of pages).
  BtraceConfig conf() const override { return BtraceConfig{event_.data_size()}; }
  // Counts in 24-byte samples, derived from data_head (approximate if other records appear).
  BtraceStats stats() const override;

 private:
  PerfEvent event_;
  std::uint64_t last_head_ = 0;  // data_head at the previous successful read
};

// Qbtrace:bts with the hardware backend: CPU check, perf_event_open, mapping.
base::Result<std::unique_ptr<BranchTracer>> open_perf_bts(Tid tid, const BtraceConfig& config);

}  // namespace tracer
