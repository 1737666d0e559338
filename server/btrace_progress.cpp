#include "server/btrace_progress.hpp"

#include <fmt/format.h>

#include "tracer/backend.hpp"

namespace server {
namespace {

struct Recorded {
  std::string backend;  // the software collector's name; empty when none records
  std::uint64_t branches = 0;
};

// What the collectors that stop the program per branch (soft, step) have recorded in every
// thread so far.
Recorded software_recorded(tracer::Target& target) {
  Recorded r;
  for (const auto& t : target.threads()) {
    const tracer::BranchTracer* tracer = target.branch_tracer(t.tid);
    if (tracer == nullptr) {
      continue;
    }
    const tracer::BtraceStats stats = tracer->stats();
    const auto backend = tracer::backend_from_name(stats.backend);
    if (backend && tracer::backend_row(*backend).stop_per_branch) {
      r.backend = stats.backend;
      r.branches += stats.recorded;
    }
  }
  return r;
}

std::string count(std::uint64_t n) {
  if (n >= 1'000'000) {
    return fmt::format("{:.1f} million", static_cast<double>(n) / 1e6);
  }
  return fmt::format("{}", n);
}

}  // namespace

std::string progress_line(const std::string& backend, std::uint64_t branches, double seconds) {
  const double rate = seconds > 0 ? static_cast<double>(branches) / seconds : 0;
  return fmt::format("hindsight: {} has recorded {} branches in {:.0f} s ({} a second)", backend, count(branches),
                     seconds, count(static_cast<std::uint64_t>(rate)));
}

void BtraceProgress::tick(tracer::Target& target, Clock::time_point now) {
  const Recorded r = software_recorded(target);
  if (r.backend.empty()) {
    running_since_.reset();
    return;
  }
  if (!running_since_) {
    running_since_ = last_said_ = now;  // the first tick of this run: the count starts here
    at_start_ = last_ = r.branches;
    return;
  }
  if (now - last_said_ < kEvery || r.branches == last_) {
    return;  // too soon, or waiting rather than recording: nothing to say
  }
  last_ = r.branches;
  last_said_ = now;
  const double seconds = std::chrono::duration<double>(now - *running_since_).count();
  say_(progress_line(r.backend, r.branches - at_start_, seconds));
  if (!advised_) {
    advised_ = true;
    // (Attached, dbt cannot serve: it must start the program. The advice names both ways.)
    say_("hindsight: software recording stops the program at every branch; for long recordings " +
         tracer::software_advice() + " where it can come in" +
         (dbt_built_ ? ", or start the program with --btrace=dbt" : "") + " (docs/btrace.md)");
  }
}

}  // namespace server
