#include "tracer/btrace/perf_bts_collector.hpp"

#include "tracer/btrace/perf_bts.hpp"

namespace tracer {

base::Result<std::unique_ptr<BranchTracer>> PerfBtsCollector::make(Tid tid, const BtraceConfig& config) {
  return open_perf_bts(tid, config);
}

}  // namespace tracer
