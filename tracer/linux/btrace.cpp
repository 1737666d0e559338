// Qbtrace:bts / Qbtrace:off for LinuxTarget: which backend traces a thread, and when its
// tracer goes away (disable, thread exit, detach, kill, exec).
#include <utility>

#include "base/log.hpp"
#include "tracer/btrace/perf_bts.hpp"
#include "tracer/linux/linux_target.hpp"

namespace tracer {
namespace {

base::Error soft_unavailable() {
  return base::make_error(base::Errc::unsupported,
                          "the emulating software tracer (--btrace=soft) is not available yet; start "
                          "hindsight with --btrace=step (single-stepping) or --btrace=auto");
}

}  // namespace

Result<void> LinuxTarget::enable_btrace(Tid tid, const BtraceConfig& config) {
  if (!has_process()) {
    return base::make_error(base::Errc::no_process, "no process");
  }
  if (find(tid) == nullptr) {
    return base::make_error(base::Errc::no_thread, "No such thread.");
  }
  if (btrace_.count(tid) != 0) {
    return base::make_error(base::Errc::invalid, "Btrace already enabled.");
  }
  TracedThread traced;
  if (btrace_backend_ == BtraceBackend::Bts || btrace_backend_ == BtraceBackend::Auto) {
    auto bts = open_perf_bts(tid, config);
    if (bts) {
      traced.tracer = std::move(*bts);
    } else if (btrace_backend_ == BtraceBackend::Bts) {
      return std::move(bts).error();
    } else {
      base::logf(base::LogCat::perf, "thread {}: {}; tracing by single-stepping", tid,
                 bts.error().message());
    }
  } else if (btrace_backend_ == BtraceBackend::Soft) {
    return soft_unavailable();
  }
  if (!traced.tracer) {
    auto step = std::make_unique<SoftStepTracer>(config);
    traced.step = step.get();
    traced.tracer = std::move(step);
  }
  base::logf(base::LogCat::ptrace, "thread {}: branch tracing on ({})", tid, traced.tracer->stats().backend);
  btrace_[tid] = std::move(traced);
  return base::success();
}

Result<void> LinuxTarget::disable_btrace(Tid tid) {
  if (btrace_.erase(tid) == 0) {
    return base::make_error(base::Errc::invalid, "Branch tracing not enabled.");
  }
  base::logf(base::LogCat::ptrace, "thread {}: branch tracing off", tid);
  return base::success();
}

BranchTracer* LinuxTarget::branch_tracer(Tid tid) {
  auto it = btrace_.find(tid);
  return it == btrace_.end() ? nullptr : it->second.tracer.get();
}

SoftStepTracer* LinuxTarget::soft_stepper(Tid tid) {
  if (btrace_.empty()) {
    return nullptr;
  }
  auto it = btrace_.find(tid);
  return it == btrace_.end() ? nullptr : it->second.step;
}

// A thread gone (tid) or the whole process (0): its history goes with it.
void LinuxTarget::forget_btrace(Tid tid) {
  if (tid == 0) {
    btrace_.clear();
    insn_cache_.clear();
  } else {
    btrace_.erase(tid);
  }
}

}  // namespace tracer
