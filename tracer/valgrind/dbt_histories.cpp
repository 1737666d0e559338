#include "tracer/valgrind/dbt_histories.hpp"

#include "tracer/btrace/dbt_ring.h"
#include "tracer/btrace/dbt_ring_reader.hpp"

namespace tracer {

base::Result<void> DbtHistories::enable(const std::string& dir, Pid pid, Tid tid, const BtraceConfig& config,
                                        const std::function<std::vector<ThreadInfo>()>& threads) {
  if (tracers_.count(tid) != 0 && handed_over_.erase(tid) != 0) {
    tracers_[tid]->new_reader();
    return base::success();
  }
  if (tracers_.count(tid) != 0) {
    return base::make_error(base::Errc::invalid, "Btrace already enabled.");
  }
  // The recorder has recorded this thread since it began; GDB's history starts now.
  const std::string path = dir + "/" + HS_DBT_RING_PREFIX + std::to_string(pid) + "." + std::to_string(tid);
  auto ring = DbtRing::open(path);
  if (!ring) {
    return base::make_error(base::Errc::unsupported, "no history from the dbt recorder for thread " +
                                                         std::to_string(tid) + ": " + ring.error().message());
  }
  if (tracers_.empty()) {
    recording_threads_.clear();  // recording starts now: who is there already
    for (const auto& t : threads()) {
      recording_threads_.insert(t.tid);
    }
  }
  const bool born_since = from_birth_ || recording_threads_.count(tid) == 0;
  tracers_[tid] = std::make_unique<DbtTracer>(std::move(ring).value(), born_since, config);
  return base::success();
}

base::Result<void> DbtHistories::disable(Tid tid) {
  if (tracers_.erase(tid) == 0) {
    return base::make_error(base::Errc::invalid, "Btrace not enabled.");
  }
  return base::success();
}

BranchTracer* DbtHistories::tracer(Tid tid) {
  auto it = tracers_.find(tid);
  return it != tracers_.end() ? it->second.get() : nullptr;
}

void DbtHistories::hand_over() {
  for (const auto& [tid, tracer] : tracers_) {
    handed_over_.insert(tid);
  }
}

void DbtHistories::process_ended(const std::string& dir, Pid pid) {
  if (keep_ended_ && pid > 0) {
    // Every thread's ring, mapped before the directory goes (a mapping outlives its file).
    for (const auto& path : dbt_ring_paths(dir, pid)) {
      if (auto ring = DbtRing::open(path)) {
        const Tid tid = ring->tid();
        ended_[pid][tid] = std::make_unique<DbtTracer>(std::move(ring).value(), true);
      }
    }
  }
  tracers_.clear();
}

std::vector<std::pair<Tid, BranchTracer*>> DbtHistories::ended(Pid pid) {
  std::vector<std::pair<Tid, BranchTracer*>> out;
  if (auto it = ended_.find(pid); it != ended_.end()) {
    for (const auto& [tid, tracer] : it->second) {
      out.emplace_back(tid, tracer.get());
    }
  }
  return out;
}

std::vector<ThreadLife> DbtHistories::thread_lives(const std::string& dir, Pid pid) {
  std::vector<ThreadLife> out;
  for (const auto& path : dbt_ring_paths(dir, pid)) {
    if (auto ring = DbtRing::open(path)) {
      out.push_back(ThreadLife{ring->tid(), ring->born_ns(), ring->exited_ns()});
    }
  }
  return out;
}

}  // namespace tracer
