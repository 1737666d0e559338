// Qbtrace:bts / Qbtrace:off for LinuxTarget: the collector of a process (one backend per
// process, chosen at the first enable), and threads born while it records.
#include <unistd.h>

#include <functional>
#include <optional>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "base/log.hpp"
#include "tracer/btrace/bts_decode.hpp"
#include "tracer/btrace/collector_factories.hpp"
#include "tracer/inprocess/recorder/recorder_api.h"
#include "tracer/linux/call_refusal.hpp"
#include "tracer/linux/linux_target.hpp"
#include "tracer/linux/procfs.hpp"
#include "tracer/linux/recorder_seccomp.hpp"

namespace tracer {

// One backend's collector for the process of tid, its problem noted for `monitor btrace`.
Result<std::unique_ptr<Collector>> LinuxTarget::try_collector(Backend backend, Tid tid, const BtraceConfig& config) {
  if (backend == Backend::Inproc) {
    if (auto unfit = recorder_unfit(tid)) {
      collector_problems_[backend] = *unfit;
      return base::make_error(base::Errc::unsupported, "the in-process recorder cannot come in: " + *unfit);
    }
  }
  const CollectorFactory make = collector_factory(backend);
  if (make == nullptr) {
    return base::make_error(base::Errc::unsupported, "--btrace=" + std::string(backend_name(backend)) +
                                                         " records with a target of its own, not under ptrace");
  }
  auto made = make(CollectorRequest{tid, config, btrace_scope_});
  if (made) {
    collector_problems_.erase(backend);
  } else {
    collector_problems_[backend] = made.error().message();
  }
  return made;
}

// Why auto does not choose the in-process recorder for the process of tid (nothing: it may).
std::optional<std::string> LinuxTarget::recorder_unfit(Tid tid) {
  const Located at = locate(tid);
  if (at.process == nullptr) {
    return "no process";
  }
  if (recorder_library_.empty() || ::access(recorder_library_.c_str(), R_OK) != 0) {
    return std::string(HS_RECORDER_LIBRARY) + " is not installed beside this hindsight";
  }
  if (at.process->isa != arch::x86::Isa::Amd64) {
    return "a 32-bit program: the recorder is 64-bit code";
  }
  const int seccomp = procfs::seccomp_mode(at.process->pid);
  if (seccomp == 1) {
    return "the program runs in seccomp's strict mode, which kills it at any system call but read, write, exit "
           "and sigreturn";
  }
  if (seccomp == 2) {
    // (A filter, as containers have, is read and run on the recorder's calls.)
    if (auto refused = seccomp_refusal(tid)) {
      return refused;
    }
  }
  // What the recorder maps for itself and a few threads (its image, two code cache regions, its
  // tables, each thread's ring, stack and lookup table: some 60 MiB), with room to spare: under
  // a tighter RLIMIT_AS it would take what the program's own mmap needs.
  constexpr std::uint64_t kRecorderAddressSpace = 128ull << 20;
  if (auto room = procfs::address_space_room(at.process->pid); room && *room < kRecorderAddressSpace) {
    return fmt::format("the program's address space limit (RLIMIT_AS) leaves {} MiB free, and the recorder "
                       "maps some 60 MiB of its own",
                       *room >> 20);
  }
  return std::nullopt;
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
    if (!p.recorder) {  // (a fork child's holds its copy of its parent's)
      p.recorder = std::make_unique<ProcessRecorder>(p, recorder_library_);  // used by inproc only
    }
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
  // (In non-stop the thread, or others, may run in the recorder's cache: out first, the
  // recorder to be taken out with them.)
  (void)with_recorder_threads_out(p, [&] {
    p.collector->stop(tid);
    unclaimed_.erase(tid);
    if (p.collector->traced_count() == 0) {
      p.code.unplant_all(SiteOwner::Collector);
      take_recorder_out(p);
      p.collector.reset();  // `record stop`: the last thread stopped recording
    }
  });
  base::logf(base::LogCat::ptrace, "thread {}: branch tracing off", tid);
  return base::success();
}

Tid LinuxTarget::recorder_caller(const Process& p) {
  Tid caller = 0;  // a stopped thread: one where a call may run, if there is one
  for (const auto& [tid, t] : p.threads) {
    if (!t.stopped()) {
      continue;
    }
    if (!call_refused(kernel_, tid)) {
      return tid;
    }
    caller = caller != 0 ? caller : tid;
  }
  return caller;
}

// The in-process recorder leaves the process (its threads are stopped): the program's own code
// and nothing of the recorder's mapped.
void LinuxTarget::take_recorder_out(Process& p) {
  if (!p.recorder) {
    return;
  }
  const Tid caller = recorder_caller(p);
  if (auto out = caller != 0 ? p.recorder->unload(caller) : base::Result<void>(base::make_error(base::Errc::invalid, "no stopped thread"));
      !out) {
    base::logf(base::LogCat::ptrace, "process {}: the in-process recorder stays in: {}", p.pid, out.error().message());
  }
  p.recorder.reset();
}

// Running threads the recorder may have in its cache (one it does not know may be a clone made
// there): their stop brings them out (InprocCollector::thread_stopped).
bool LinuxTarget::in_recorder(const Process& p, Tid tid) const {
  return p.recorder && p.recorder->inside(tid);
}

bool LinuxTarget::with_recorder_threads_out(Process& p, const std::function<void()>& work) {
  return with_threads_paused(p, [&](Tid tid) { return in_recorder(p, tid); }, work);
}

void LinuxTarget::recorder_code_changed(Process& p) {
  if (!runs_any(p, [&](Tid tid) { return in_recorder(p, tid); })) {
    return;  // (the next entry flushes, if the int3s differ by then: GDB takes them out and puts them back at each stop)
  }
  // The translations are flushed now, where a stopped thread can make the call; else at the
  // next entry.
  (void)with_recorder_threads_out(p, [&] {
    if (const Tid caller = recorder_caller(p); caller != 0) {
      if (auto flushed = p.recorder->flush_if_stale(caller); !flushed) {
        base::logf(base::LogCat::ptrace, "process {}: the recorder's translations are flushed later: {}", p.pid,
                   flushed.error().message());
      }
    }
  });
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
