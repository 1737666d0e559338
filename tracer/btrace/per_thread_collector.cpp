// Per-thread tracers: started, stopped, retired when their thread exits.
#include "tracer/btrace/per_thread_collector.hpp"

namespace tracer {

base::Result<void> PerThreadCollector::start(Tid tid, const BtraceConfig& config) {
  if (live_.count(tid) != 0) {
    return base::make_error(base::Errc::invalid, "Btrace already enabled.");
  }
  auto made = make(tid, config);
  if (!made) {
    return std::move(made).error();
  }
  retired_.erase(tid);  // a reused tid starts afresh
  live_[tid] = std::move(*made);
  return base::success();
}

void PerThreadCollector::stop(Tid tid) {
  live_.erase(tid);
  if (live_.empty()) {
    retired_.clear();  // `record stop`: nothing is recording any more
  }
}

void PerThreadCollector::thread_exited(Tid tid) {
  auto it = live_.find(tid);
  if (it == live_.end()) {
    return;
  }
  retired_[tid] = std::move(it->second);
  live_.erase(it);
}

std::vector<Tid> PerThreadCollector::recorded_threads() const {
  std::vector<Tid> out;
  for (const auto& [tid, tracer] : live_) {
    out.push_back(tid);
  }
  for (const auto& [tid, tracer] : retired_) {
    out.push_back(tid);
  }
  return out;
}

BranchTracer* PerThreadCollector::tracer(Tid tid) {
  if (auto* t = live(tid)) {
    return t;
  }
  auto it = retired_.find(tid);
  return it == retired_.end() ? nullptr : it->second.get();
}

}  // namespace tracer
