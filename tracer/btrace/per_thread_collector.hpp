// The bookkeeping every collector shares: one BranchTracer per traced thread, and the
// histories of threads that exited while recording, kept until tracing stops.
#pragma once

#include <map>
#include <memory>

#include "tracer/btrace/collector.hpp"

namespace tracer {

class PerThreadCollector : public Collector {
 public:
  base::Result<void> start(Tid tid, const BtraceConfig& config) override;
  void stop(Tid tid) override;
  void thread_exited(Tid tid) override;
  BranchTracer* tracer(Tid tid) override;
  bool tracing(Tid tid) const override { return live_.count(tid) != 0; }
  std::size_t traced_count() const override { return live_.size(); }
  std::vector<Tid> recorded_threads() const override;
  std::size_t retired_count() const override { return retired_.size(); }
  void forget_retired() override { retired_.clear(); }

 protected:
  // A new tracer for tid, or why this backend cannot trace it.
  virtual base::Result<std::unique_ptr<BranchTracer>> make(Tid tid, const BtraceConfig& config) = 0;
  // The live tracer of tid (nullptr when not traced).
  BranchTracer* live(Tid tid) const {
    auto it = live_.find(tid);
    return it == live_.end() ? nullptr : it->second.get();
  }

 private:
  std::map<Tid, std::unique_ptr<BranchTracer>> live_;
  std::map<Tid, std::unique_ptr<BranchTracer>> retired_;
};

}  // namespace tracer
