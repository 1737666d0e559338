// The Intel BTS collector: one perf_event per thread; the hardware records while the thread
// runs, so the core resumes traced threads as any other.
#pragma once

#include "tracer/btrace/per_thread_collector.hpp"

namespace tracer {

class PerfBtsCollector final : public PerThreadCollector {
 public:
  std::string_view backend() const override { return "bts"; }

 protected:
  base::Result<std::unique_ptr<BranchTracer>> make(Tid tid, const BtraceConfig& config) override;
};

}  // namespace tracer
