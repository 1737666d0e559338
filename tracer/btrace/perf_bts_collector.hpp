// The Intel BTS collector: one perf_event per thread; the hardware records while the thread
// runs, so the core resumes traced threads as any other.
#pragma once

#include <memory>

#include "tracer/backend.hpp"
#include "tracer/btrace/per_thread_collector.hpp"

namespace tracer {

class PerfBtsCollector final : public PerThreadCollector {
 public:
  std::string_view backend() const override { return backend_name(Backend::Bts); }

 protected:
  base::Result<std::unique_ptr<BranchTracer>> make(Tid tid, const BtraceConfig& config) override;
};

// --btrace=bts: the collector, when the kernel gives BTS for the request's thread (perf_event_open
// is tried on it once); else why not.
base::Result<std::unique_ptr<Collector>> make_perf_bts_collector(const CollectorRequest& request);

}  // namespace tracer
