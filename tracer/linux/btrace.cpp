// Qbtrace:bts / Qbtrace:off for LinuxTarget: the collector of a process (one backend per
// process, chosen at the first enable), and threads born while it records.
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "base/log.hpp"
#include "tracer/btrace/bts_decode.hpp"
#include "tracer/btrace/collector_factories.hpp"
#include "tracer/linux/code_view.hpp"
#include "tracer/linux/linux_target.hpp"

namespace tracer {

// One backend's collector for the process of tid, its problem noted for `monitor btrace`.
Result<std::unique_ptr<Collector>> LinuxTarget::try_collector(Backend backend, Tid tid, const BtraceConfig& config) {
  const CollectorFactory make = collector_factory(backend);
  if (make == nullptr) {
    return base::make_error(base::Errc::unsupported, "--btrace=" + std::string(backend_name(backend)) +
                                                         " records with a target of its own, not under ptrace");
  }
  Located at = locate(tid);
  if (at.process == nullptr) {
    return base::make_error(base::Errc::no_process, "no process");
  }
  ProcessCodeView view(*at.process);
  auto made = make(CollectorRequest{tid, config, btrace_scope_, &view, &collector_setup_});
  if (made) {
    collector_problems_.erase(backend);
  } else {
    collector_problems_[backend] = made.error().message();
  }
  return made;
}

// The backend --btrace asked for, for the process of tid, its first thread to record (the
// others share the collector); auto: the first of kAutoInSession that works for that thread (a
// scope passes over a backend that records every branch).
Result<std::unique_ptr<Collector>> LinuxTarget::make_collector(Tid tid, const BtraceConfig& config) {
  if (btrace_backend_ != Backend::Auto) {
    return try_collector(btrace_backend_, tid, config);
  }
  std::optional<base::Error> last;
  for (const Backend backend : kAutoInSession) {
    if (!btrace_scope_.all && !backend_row(backend).scoped) {
      continue;
    }
    auto made = try_collector(backend, tid, config);
    if (made) {
      return made;
    }
    base::logf(base::LogCat::ptrace, "thread {}: {}; auto passes over {}", tid, made.error().message(),
               backend_name(backend));
    last = std::move(made).error();
  }
  return last ? *last : base::make_error(base::Errc::unsupported, "no collector of --btrace=auto takes this scope");
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
  // A running thread (non-stop) records from now, not from its next stop: stopped for a moment,
  // it goes on recorded (the collector's own way of running it).
  Result<void> started = base::success();
  if (!with_threads_paused(p, [&](Tid t) { return t == tid; }, [&] { started = p.collector->start(tid, config); })) {
    return base::make_error(base::Errc::no_process, "the process ended");
  }
  if (!started) {
    return started;
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
  // (In non-stop the thread, or others, may run in the collector's own code: out first, the
  // collector to be taken out with them.)
  (void)with_collector_threads_paused(p, [&] {
    p.collector->stop(tid);
    unclaimed_.erase(tid);
    if (p.collector->traced_count() == 0) {
      p.code.unplant_all(SiteOwner::Collector);
      release_collector(p);  // `record stop`: the last thread stopped recording
    }
  });
  base::logf(base::LogCat::ptrace, "thread {}: branch tracing off", tid);
  return base::success();
}

// The collector leaves the process (its threads are stopped): nothing of its own stays in it.
void LinuxTarget::release_collector(Process& p) {
  if (p.collector) {
    p.collector->release();
    p.collector.reset();
  }
}

// Threads that may run the collector's own code (one it does not know may be a clone made
// there): their stop brings them back to the program's (Collector::thread_stopped).
bool LinuxTarget::runs_collector_code(const Process& p, Tid tid) const {
  return p.collector && p.collector->runs_own_code(tid);
}

bool LinuxTarget::with_collector_threads_paused(Process& p, const std::function<void()>& work) {
  return with_threads_paused(p, [&](Tid tid) { return runs_collector_code(p, tid); }, work);
}

void LinuxTarget::collector_edits_due() {
  std::vector<Pid> due;
  for (const auto& [pid, p] : processes_) {
    if (!p->collector_edit_waiters.empty()) {
      due.push_back(pid);
    }
  }
  for (const Pid pid : due) {
    Process* p = process(pid);
    if (p == nullptr) {
      continue;
    }
    (void)with_collector_threads_paused(*p, [&] {
      if (p->collector) {
        p->collector->code_edited();
      }
    });
    if (Process* still = process(pid)) {
      still->collector_edit_waiters.clear();
      proceed(*still);  // (the threads that asked waited, stopped)
    }
  }
}

void LinuxTarget::collector_code_edited(Process& p) {
  if (!runs_any(p, [&](Tid tid) { return runs_collector_code(p, tid); })) {
    return;  // (the collector's next entry catches up: GDB takes its int3s out and puts them back at each stop)
  }
  (void)with_collector_threads_paused(p, [&] { p.collector->code_edited(); });
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
