#include "tracer/open_target.hpp"

#include "tracer/linux/linux_target.hpp"
#include "tracer/linux/process_recorder.hpp"
#include "tracer/valgrind/dbt_problem.hpp"
#include "tracer/valgrind/valgrind_target.hpp"

namespace tracer {
namespace {

// A launch failure that is the program's, not the backend's.
bool program_cannot_start(const base::Error& e) { return e.detail.rfind("Cannot exec", 0) == 0; }

// The settings every target takes before its program starts.
void prepare(Target& target, const TargetRequest& request) {
  target.set_event_log(request.log);
  if (request.unattended) {
    target.keep_ended_histories();  // killed from outside: what it recorded is all there is to report
  }
}

// The recorder's target: the program starts under Valgrind.
Result<std::unique_ptr<Target>> valgrind_target(const TargetRequest& request) {
  if (auto why = dbt_problem(request.dbt_lib)) {
    return base::make_error(base::Errc::unsupported, *why);
  }
  // Unattended (triage), following forks is following the whole tree: the recorder does it.
  const bool tree = request.unattended && request.follow_forks;
  return std::unique_ptr<Target>(
      std::make_unique<ValgrindTarget>(DbtOptions{request.dbt_lib, request.ring_bytes, tree, request.keep_rings_in}));
}

// The ptrace core, recording with the collector of backend (collector_factories.hpp; auto: the
// first of kAutoInSession that works, per process).
std::unique_ptr<Target> linux_target(Backend backend, const TargetRequest& request) {
  auto target = std::make_unique<LinuxTarget>();
  target->set_btrace_backend(backend);
  target->set_btrace_scope(request.scope);
  target->set_collector_setup(CollectorSetup{recorder_port_maker(request.recorder_lib)});
  if (request.follow_forks) {
    // Children of fork and of vfork (how shells and posix_spawn start programs), and execs:
    // a vfork child is recorded from its exec on (before it, it runs in its parent's memory).
    target->set_report_forks(true, true);
    target->set_report_exec(true);
  }
  return target;
}

struct OwnTarget {
  Backend backend;
  Result<std::unique_ptr<Target>> (*make)(const TargetRequest& request);
};

// The backends that bring a Target of their own; every other records in LinuxTarget.
constexpr OwnTarget kOwnTargets[] = {
    {Backend::Dbt, valgrind_target},
};

Result<std::unique_ptr<Target>> make_target(Backend backend, const TargetRequest& request) {
  for (const auto& own : kOwnTargets) {
    if (own.backend == backend) {
      return own.make(request);
    }
  }
  return linux_target(backend, request);
}

Result<OpenedTarget> try_backend(Backend backend, const TargetRequest& request) {
  auto target = make_target(backend, request);
  if (!target) {
    return std::move(target).error();
  }
  prepare(**target, request);
  OpenedTarget out{std::move(*target), backend, std::nullopt, {}};
  if (!request.launch) {
    return out;
  }
  auto pid = out.target->launch(*request.launch);
  if (!pid) {
    return std::move(pid).error();
  }
  out.pid = *pid;
  if (request.unattended) {
    // Recording from the first instruction: every thread's ring is read from its start.
    if (auto ok = out.target->enable_btrace(*pid, BtraceConfig{request.ring_bytes}); !ok) {
      return std::move(ok).error();
    }
  }
  return out;
}

}  // namespace

bool has_own_target(Backend backend) {
  for (const auto& own : kOwnTargets) {
    if (own.backend == backend) {
      return true;
    }
  }
  return false;
}

Result<BackendChain> backend_chain(const TargetRequest& request) {
  BackendChain chain;
  const bool launches = request.launch.has_value();
  if (request.backend == Backend::Auto && request.unattended) {
    for (const Backend backend : kAutoUnattended) {
      if (launches || !backend_row(backend).launch_only) {
        chain.tries.push_back(backend);
      }
    }
    return chain;
  }
  // A backend asked for; a session's auto stays auto: LinuxTarget chooses when a process's first
  // thread starts recording.
  const BackendRow& row = backend_row(request.backend);
  if (request.follow_forks && !request.unattended && !row.no_fork_following.empty()) {
    return base::make_error(base::Errc::unsupported,
                            "--follow-fork needs a ptrace collector (soft or step): " + std::string(row.no_fork_following));
  }
  if (row.launch_only && !launches) {
    return base::make_error(base::Errc::unsupported,
                            "the " + std::string(row.name) + " recorder records only a program it starts");
  }
  chain.tries = {request.backend};
  if (!request.unattended && row.session_fallback) {
    chain.tries.push_back(*row.session_fallback);  // a GDB session still wants history
  }
  return chain;
}

Result<OpenedTarget> open_target(const TargetRequest& request) {
  auto chain = backend_chain(request);
  if (!chain) {
    return std::move(chain).error();
  }
  std::vector<NotUsed> not_used = chain->passed_over;
  for (std::size_t i = 0; i < chain->tries.size(); ++i) {
    const Backend backend = chain->tries[i];
    auto opened = try_backend(backend, request);
    if (opened) {
      opened->not_used = std::move(not_used);
      return opened;
    }
    if (i + 1 == chain->tries.size() || program_cannot_start(opened.error())) {
      return opened;
    }
    not_used.push_back({backend, opened.error().message()});
  }
  return base::make_error(base::Errc::internal, "no backend to try");
}

}  // namespace tracer
