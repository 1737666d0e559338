#include "tracer/btrace/perf_bts_collector.hpp"

#include "tracer/btrace/perf_bts.hpp"

namespace tracer {

base::Result<std::unique_ptr<BranchTracer>> PerfBtsCollector::make(Tid tid, const BtraceConfig& config) {
  return open_perf_bts(tid, config);
}

base::Result<std::unique_ptr<Collector>> make_perf_bts_collector(const CollectorRequest& request) {
  if (auto probe = open_perf_bts(request.tid, request.config); !probe) {
    return std::move(probe).error();
  }
  return std::unique_ptr<Collector>(std::make_unique<PerfBtsCollector>());
}

}  // namespace tracer
