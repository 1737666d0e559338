// Qbtrace:bts / Qbtrace:off for LinuxTarget: the collector of a process (one backend per
// process, chosen at the first enable), and threads born while it records.
#include <utility>

#include "base/log.hpp"
#include "tracer/btrace/bts_decode.hpp"
#include "tracer/btrace/perf_bts.hpp"
#include "tracer/btrace/perf_bts_collector.hpp"
#include "tracer/btrace/soft_emulate.hpp"
#include "tracer/btrace/soft_step.hpp"
#include "tracer/linux/linux_target.hpp"

namespace tracer {

// The backend --btrace asked for, for the process of tid, its first thread to record (the
// others share the collector); auto: BTS when the kernel gives it for that thread, else
// SoftEmulate.
Result<std::unique_ptr<Collector>> LinuxTarget::make_collector(Tid tid, const BtraceConfig& config) {
  auto soft_emulate = [&]() -> std::unique_ptr<Collector> {
    return std::make_unique<SoftEmulateCollector>(btrace_scope_);
  };
  if (btrace_backend_ == Backend::Auto && !btrace_scope_.all) {
    return soft_emulate();  // BTS records every branch: a scope asks for the software tracer
  }
  switch (btrace_backend_) {
    case Backend::Soft:
      return soft_emulate();
    case Backend::Step:
      return std::unique_ptr<Collector>(std::make_unique<SoftStepCollector>());
    case Backend::Dbt:
      return base::make_error(base::Errc::unsupported, "the dbt recorder records only a program started under it");
    case Backend::Bts:
    case Backend::Auto: {
      auto probe = open_perf_bts(tid, config);
      if (probe) {
        bts_problem_.clear();
        return std::unique_ptr<Collector>(std::make_unique<PerfBtsCollector>());
      }
      bts_problem_ = probe.error().message();
      if (btrace_backend_ == Backend::Bts) {
        return std::move(probe).error();
      }
      base::logf(base::LogCat::perf, "thread {}: {}; tracing in software (soft)", tid, probe.error().message());
      return soft_emulate();
    }
  }
  return soft_emulate();
}

Result<void> LinuxTarget::enable_btrace(Tid tid, const BtraceConfig& requested) {
  const BtraceConfig config = as_kernel_sizes_it(requested);
  if (!has_process()) {
    return base::make_error(base::Errc::no_process, "no process");
  }
  Located at = locate(tid);
  if (at.thread == nullptr) {
    return base::make_error(base::Errc::no_thread, "No such thread.");
  }
  Process& p = *at.process;
  if (p.vfork_parent != 0) {
    p.record_at_exec = config;  // its memory is its parent's until it execs (or exits)
    base::logf(base::LogCat::ptrace, "thread {}: a vfork child, recording from its exec", tid);
    return base::success();
  }
  if (p.collector && p.collector->tracing(tid) && unclaimed_.erase(tid) != 0) {
    p.collector->tracer(tid)->new_reader();  // born while recording: traced already, now GDB's too
    return base::success();
  }
  if (!p.collector) {
    auto made = make_collector(tid, config);
    if (!made) {
      return std::move(made).error();
    }
    p.collector = std::move(*made);
  }
  if (auto ok = p.collector->start(tid, config); !ok) {
    return ok;
  }
  btrace_config_ = config;
  base::logf(base::LogCat::ptrace, "thread {}: branch tracing on ({})", tid, p.collector->backend());
  return base::success();
}

Result<void> LinuxTarget::disable_btrace(Tid tid) {
  Located at = locate(tid);
  if (at.thread != nullptr && at.process->record_at_exec) {
    at.process->record_at_exec.reset();  // a vfork child that was to record from its exec
    return base::success();
  }
  if (at.thread == nullptr || !at.process->collector || !at.process->collector->tracing(tid)) {
    return base::make_error(base::Errc::invalid, "Branch tracing not enabled.");
  }
  Process& p = *at.process;
  p.collector->stop(tid);
  unclaimed_.erase(tid);
  if (p.collector->traced_count() == 0) {
    p.code.unplant_all(SiteOwner::Collector);
    p.collector.reset();  // `record stop`: the last thread stopped recording
  }
  base::logf(base::LogCat::ptrace, "thread {}: branch tracing off", tid);
  return base::success();
}

BranchTracer* LinuxTarget::branch_tracer(Tid tid) {
  Located at = locate(tid);
  if (at.thread == nullptr || !at.process->collector) {
    return nullptr;
  }
  return at.process->collector->tracing(tid) ? at.process->collector->tracer(tid) : nullptr;
}

void LinuxTarget::hand_over_history() {
  for (auto& [pid, p] : processes_) {
    for (const auto& [tid, thread] : p->threads) {
      if (p->collector && p->collector->tracing(tid)) {
        unclaimed_.insert(tid);
      }
    }
  }
}

// A thread born while its process records is traced from its first instruction (GDB would
// only ask once it hears of the thread, after it ran).
void LinuxTarget::collector_thread_born(Process& p, LinuxThread& t) {
  if (!p.collector || p.collector->traced_count() == 0) {
    return;
  }
  if (auto ok = p.collector->start(t.tid, btrace_config_); ok) {
    unclaimed_.insert(t.tid);
  } else {
    base::logf(base::LogCat::ptrace, "thread {}: no branch trace: {}", t.tid, ok.error().message());
  }
}

}  // namespace tracer
