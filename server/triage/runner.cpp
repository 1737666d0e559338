#include "server/triage/runner.hpp"

#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <set>
#include <vector>
#include <utility>

#include "arch/x86/i386_siginfo.hpp"
#include "base/log.hpp"
#include "server/triage/fresh_line.hpp"
#include "server/triage/library_watch.hpp"
#include "server/triage/mapped_files.hpp"
#include "server/triage/maps_keeper.hpp"
#include "server/triage/signal_facts.hpp"
#include "tracer/linux/procfs.hpp"
#include "tracer/open_target.hpp"

namespace server::triage {
namespace {

using Clock = std::chrono::steady_clock;

tracer::LaunchSpec launch_spec(const Options& o) {
  tracer::LaunchSpec spec;
  spec.program = o.program.front();
  spec.args.assign(o.program.begin() + 1, o.program.end());
  spec.startup_with_shell = false;  // the arguments reach the program as they are
  // Randomized as it runs natively; and so that where a container's seccomp profile refuses to
  // turn it off, no warning joins the program's stderr.
  spec.disable_aslr = false;
  return spec;
}

bool is_fault(int signo) { return signo == SIGSEGV || signo == SIGBUS || signo == SIGILL || signo == SIGFPE; }

// si_code and (for faults) the address, or (for kill, tgkill, sigqueue) the sender's pid, from
// the thread's siginfo.
struct SignalInfo {
  int code = 0;
  std::uint64_t address = 0;
  tracer::Pid sender = 0;
};
SignalInfo signal_info(tracer::Target& target, tracer::Tid tid) {
  SignalInfo out;
  // In the program's own layout: si_code at 8, si_addr a word of the program's.
  const arch::x86::Isa isa = target.isa(tid);
  const std::size_t word = arch::x86::register_roles(isa).word_bytes;
  const std::size_t addr_at = arch::x86::siginfo_address_offset(isa);
  auto info = target.siginfo(tid);
  if (info && info->size() >= addr_at + word) {
    std::memcpy(&out.code, info->data() + 8, sizeof out.code);
    std::memcpy(&out.address, info->data() + addr_at, word);
    std::memcpy(&out.sender, info->data() + addr_at, sizeof out.sender);  // si_pid: the union's first int
  }
  return out;
}

Outcome signal_outcome(const tracer::StopEvent& ev, const SignalInfo& info) {
  Outcome o;
  o.kind = Outcome::Kind::Signal;
  o.signo = ev.signal;
  o.exit_status = 128 + ev.signal;
  o.si_code = info.code;
  o.has_si_code = true;
  o.has_fault_address = has_fault_address(ev.signal, info.code);
  o.fault_address = o.has_fault_address ? info.address : 0;
  o.sender = signal_sender(info.code, info.sender, ev.pid);
  if (o.sender == Sender::Itself || o.sender == Sender::Process) {
    o.sender_pid = info.sender;
  }
  if (o.sender == Sender::Process) {
    o.sender_name = tracer::procfs::thread_name(info.sender, info.sender);  // now, while it lives
  }
  return o;
}

tracer::ResumePlan continue_all(tracer::Tid tid = 0, int signal = 0) {
  tracer::ResumePlan plan;
  if (tid != 0) {
    plan.actions.push_back(tracer::ThreadAction{tid, 0, tracer::ResumeKind::Continue, signal});
  }
  plan.actions.push_back(tracer::ThreadAction{tracer::kAllThreads, 0, tracer::ResumeKind::Continue, 0});
  return plan;
}

// An end by signo, of the program (kind Signal) or of triage (Interrupted): 128+signo, as a
// shell's job.
Outcome ended_by(Outcome::Kind kind, int signo) {
  Outcome o;
  o.kind = kind;
  o.signo = signo;
  o.exit_status = 128 + signo;
  return o;
}

// A process that ended of signo with no stop first (SIGKILL): no siginfo, nothing to let die.
Outcome killed_outright(int signo) { return ended_by(Outcome::Kind::Signal, signo); }

Outcome timed_out() {
  Outcome o;
  o.kind = Outcome::Kind::Timeout;
  o.exit_status = kExitTimeout;
  return o;
}

// Triage itself got signo.
Outcome interrupted(int signo) { return ended_by(Outcome::Kind::Interrupted, signo); }

// A descendant the collector followed by itself, stopped where a signal kills it.
Ending dying_descendant_ending(tracer::DyingDescendant& dying, tracer::EventLog& log) {
  Ending end;
  const tracer::StopEvent& ev = dying.stop;
  end.stopped_ns = tracer::monotonic_ns();  // (it stopped earlier: no branch is later)
  if (ev.reason == tracer::StopReason::Killed) {
    end.outcome = killed_outright(ev.signal);
  } else {
    log.add("signal", ev.pid, ev.tid, signal_name(ev.signal), ev.signal);
    end.outcome = signal_outcome(ev, signal_info(*dying.target, ev.tid));
  }
  end.stop = ev;
  end.own_target = std::move(dying.target);
  end.command = std::move(dying.command);
  end.maps = std::move(dying.maps);
  return end;
}

// The fork that made pid, CLOCK_MONOTONIC (0: none logged, the started program).
std::uint64_t fork_ns(const tracer::EventLog& log, tracer::Pid pid) {
  for (const auto& e : log.events()) {
    if ((e.kind == "fork" || e.kind == "vfork") && e.number == pid) {
      return log.start_ns() + static_cast<std::uint64_t>(e.t_ms * 1e6);
    }
  }
  return 0;
}

// The one place triage waits: the run's stops, descendants the collector follows by itself
// that begin to die (each in a target of its own), orphans reaped, processes let die of their
// signal, --timeout and triage's own SIGINT/SIGTERM; until the tree has ended.
class StopLoop {
 public:
  StopLoop(Recorded& run, const Options& o, tracer::EventLog& log, const volatile std::sig_atomic_t& stop_requested,
           const OnDeath& on_death)
      : run_(run), target_(*run.target), o_(o), log_(log), stop_requested_(stop_requested), on_death_(on_death) {
    if (o.timeout > 0) {
      deadline_ = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(o.timeout));
    }
  }

  Ending run() {
    Ending end = loop();
    report_killed();
    return end;
  }

 private:
  Ending loop();
  // --timeout or triage's own SIGINT/SIGTERM: the started program is stopped where it is (the
  // run ends at its next stop); when it has ended already or cannot be stopped, the run ends now.
  std::optional<Ending> cut_short(const Outcome& why);
  // A process let die of its signal: its end comes through its own target, or the run's.
  struct Dying {
    std::unique_ptr<tracer::Target> own;  // null: the run's target
    tracer::Pid pid = 0;
    Clock::time_point give_up;  // killed then
  };

  // Waits up to `wait` for the run's next stop; meanwhile takes every descendant that began
  // to die (handed over, or the run's ending when nobody is) and tends the dying.
  std::optional<tracer::StopEvent> next(std::chrono::milliseconds wait);
  // A process's death: reported, then let die (true); or, with nobody to report to, the
  // run's ending (false).
  bool died(Ending& death);
  void tend_dying();
  void report_killed();  // the ones killed outright, queued
  void ended(const tracer::StopEvent& ev);  // an exit, or a death without a stop first
  void stopped(const tracer::StopEvent& ev);
  bool tree_alive() const { return target_.has_process() || target_.descendants_alive(); }

  Recorded& run_;
  tracer::Target& target_;
  const Options& o_;
  tracer::EventLog& log_;
  const volatile std::sig_atomic_t& stop_requested_;
  const OnDeath& on_death_;
  Clock::time_point deadline_ = Clock::time_point::max();
  LibraryWatch libraries_;
  std::vector<Dying> dying_;
  // Reported at a stop, then let die: its end is no news (tend_dying may have let go of it
  // before the end's event is handled).
  std::set<tracer::Pid> reported_deaths_;
  std::vector<Ending> killed_;  // killed outright, not reported yet
  MapsKeeper maps_;  // every followed process's maps as last seen (the started program's too)
  std::optional<Ending> root_end_;  // the started program has ended
  Clock::time_point root_ended_at_;
  std::optional<Ending> stopped_here_;  // the run ends at a death nobody is told of
  std::optional<Outcome> stopping_;     // cut short: the started program is being stopped
};

Ending StopLoop::loop() {
  log_.add("thread_start", run_.pid, run_.pid, o_.program.front());
  libraries_.start(target_, run_.pid, log_);
  maps_.note(run_.pid);
  run_.maps = maps_.of(run_.pid);
  if (auto ok = target_.resume(continue_all()); !ok) {
    Ending failed;
    failed.outcome.exit_status = kExitTriageFailed;
    return failed;
  }
  bool told_left_running = false;
  std::optional<tracer::StopEvent> carried;  // a stop that came while stepping over the watch
  while (!root_end_ || !dying_.empty() || tree_alive()) {
    if (root_end_ && !told_left_running && Clock::now() - root_ended_at_ > std::chrono::seconds(2)) {
      told_left_running = true;
      start_fresh_line(STDERR_FILENO);
      std::fprintf(stderr, "hindsight triage: %s ended; waiting for the processes it left running\n",
                   o_.program.front().c_str());
    }
    if (stopping_ && root_end_) {  // it ended before it could be stopped: what it left is killed
      Ending end = std::move(*root_end_);
      end.cut_short = stopping_;
      return end;
    }
    if (!stopping_ && (stop_requested_ != 0 || Clock::now() >= deadline_)) {
      if (auto end = cut_short(stop_requested_ != 0 ? interrupted(stop_requested_) : timed_out())) {
        return std::move(*end);
      }
    }
    auto ev = carried ? std::exchange(carried, std::nullopt) : next(std::chrono::milliseconds(50));
    if (stopped_here_) {
      return std::move(*stopped_here_);
    }
    if (!ev) {
      report_killed();
      continue;
    }
    if (ev->reason == tracer::StopReason::Exited || ev->reason == tracer::StopReason::Killed) {
      ended(*ev);
      (void)target_.resume(continue_all());  // the others (if any) go on
      continue;
    }
    if (stopping_ && !root_end_) {  // stopped where it was
      Ending end;
      end.outcome = *stopping_;
      end.cut_short = stopping_;
      end.stop = *ev;
      end.stopped_ns = tracer::monotonic_ns();
      return end;
    }
    if (libraries_.handle(target_, *ev, log_)) {
      maps_.note(run_.pid);
      run_.maps = maps_.of(run_.pid);  // what a report after its death names code with
      // The dynamic linker changed its list: logged; past the breakpoint, and on it goes.
      carried = libraries_.step_over(target_, *ev, [&] {
        const auto give_up = Clock::now() + std::chrono::seconds(10);
        std::optional<tracer::StopEvent> after;
        while (!after && !stopped_here_ && Clock::now() < give_up) {
          after = next(std::chrono::milliseconds(50));
        }
        return after;
      });
      if (stopped_here_) {
        return std::move(*stopped_here_);
      }
      if (!carried) {
        (void)target_.resume(continue_all(ev->tid));
      }
      continue;
    }
    stopped(*ev);
    if (stopped_here_) {
      return std::move(*stopped_here_);
    }
  }
  return std::move(*root_end_);
}

std::optional<Ending> StopLoop::cut_short(const Outcome& why) {
  stopping_ = why;
  const char* const cause = why.kind == Outcome::Kind::Timeout ? "--timeout" : "interrupted";
  if (root_end_) {  // what it left running is killed, as a CI timeout would
    start_fresh_line(STDERR_FILENO);
    std::fprintf(stderr, "hindsight triage: %s: killing the processes %s left running\n", cause,
                 o_.program.front().c_str());
    Ending end = std::move(*root_end_);
    end.cut_short = why;
    return end;
  }
  if (why.kind == Outcome::Kind::Interrupted) {
    start_fresh_line(STDERR_FILENO);
    std::fprintf(stderr, "hindsight triage: %s: stopping %s for the report\n", signal_name(why.signo).c_str(),
                 o_.program.front().c_str());
  }
  if (!target_.interrupt()) {  // nothing to stop it through (dbt: it exec'd): ended as it is
    Ending end;
    end.outcome = why;
    end.cut_short = why;
    end.stopped_ns = tracer::monotonic_ns();
    return end;
  }
  return std::nullopt;  // its report comes with its next stop
}

void StopLoop::report_killed() {
  for (auto& death : std::exchange(killed_, {})) {
    (void)died(death);
  }
}

std::optional<tracer::StopEvent> StopLoop::next(std::chrono::milliseconds wait) {
  std::optional<tracer::StopEvent> ev = target_.poll();
  if (!ev) {
    pollfd fds[2] = {{target_.event_fd(), POLLIN, 0}, {target_.descendants_fd(), POLLIN, 0}};
    if (::poll(fds, 2, static_cast<int>(wait.count())) > 0 && fds[0].revents != 0) {
      ev = target_.poll();
    }
  }
  maps_.tend();
  if (std::string root = maps_.of(run_.pid); !root.empty()) {
    run_.maps = std::move(root);
  }
  while (!stopped_here_) {
    auto dying = target_.take_dying_descendant();
    if (!dying) {
      break;
    }
    Ending death = dying_descendant_ending(*dying, log_);
    death.started_ns = fork_ns(log_, death.stop.pid);
    if (death.stop.reason == tracer::StopReason::Killed && on_death_) {
      killed_.push_back(std::move(death));  // reported with the others killed with it
    } else {
      (void)died(death);
    }
  }
  tend_dying();
  return ev;
}

bool StopLoop::died(Ending& death) {
  if (!on_death_) {
    stopped_here_ = std::move(death);
    return false;
  }
  on_death_(death);  // reported; it dies as it would have, the run goes on
  death.reported = true;
  reported_deaths_.insert(death.stop.pid);
  const Clock::time_point give_up = Clock::now() + std::chrono::seconds(10);
  if (death.own_target) {
    if (death.own_target->has_process()) {
      (void)death.own_target->resume(continue_all(death.stop.tid, death.outcome.signo));
      dying_.push_back(Dying{std::move(death.own_target), death.stop.pid, give_up});
    }
    // (The started program, unlinked since its exec: its end comes through the run's target.)
  } else if (death.stop.reason == tracer::StopReason::Signal) {
    (void)target_.resume(continue_all(death.stop.tid, death.outcome.signo));
    dying_.push_back(Dying{nullptr, death.stop.pid, give_up});
  }
  return true;
}

void StopLoop::tend_dying() {
  for (auto it = dying_.begin(); it != dying_.end();) {
    tracer::Target& t = it->own ? *it->own : target_;
    bool gone = it->own ? !t.has_process() : t.process_of(it->pid) == 0;
    if (!gone && it->own) {
      while (auto ev = t.poll()) {
        if (ev->reason == tracer::StopReason::Exited || ev->reason == tracer::StopReason::Killed) {
          gone = true;
          if (it->pid == run_.pid) {
            // The started program after an exec: its own target reaps it, so this is the status
            // it ended with; the run's target, finding it reaped, can only guess.
            ended(*ev);
          }
          break;
        }
        (void)t.resume(continue_all(ev->tid, ev->reason == tracer::StopReason::Signal ? ev->signal : 0));
      }
    }
    if (!gone && Clock::now() >= it->give_up) {
      base::logf(base::LogCat::ptrace, "triage: {} did not die of its signal: killed", it->pid);
      (void)(it->own ? t.kill() : t.kill_process(it->pid));
      gone = !it->own || !t.has_process();
    }
    it = gone ? dying_.erase(it) : it + 1;
  }
}

void StopLoop::ended(const tracer::StopEvent& ev) {
  if (ev.pid == run_.pid && root_end_) {
    return;  // told by the target that reaped it; the other's guess comes after
  }
  const std::uint64_t now_ns = tracer::monotonic_ns();  // before the log's event: no branch is later
  const bool exited = ev.reason == tracer::StopReason::Exited;
  log_.add(exited ? "exit" : "killed", ev.pid, ev.tid, {}, exited ? ev.status : ev.signal);
  const bool let_die = reported_deaths_.erase(ev.pid) > 0 ||
                       std::any_of(dying_.begin(), dying_.end(), [&](const Dying& d) { return d.pid == ev.pid; });
  std::erase_if(dying_, [&](const Dying& d) { return d.pid == ev.pid && !d.own; });
  Ending end;
  end.stop = ev;
  end.started_ns = fork_ns(log_, ev.pid);
  end.stopped_ns = now_ns;
  end.maps = ev.pid == run_.pid ? run_.maps : maps_.of(ev.pid);
  maps_.forget(ev.pid);
  end.outcome.kind = exited ? Outcome::Kind::Exit : Outcome::Kind::Signal;
  end.outcome.signo = exited ? 0 : ev.signal;
  end.outcome.exit_status = exited ? ev.status : 128 + ev.signal;
  if (!exited && !let_die && ev.signal == SIGKILL && on_death_) {
    // Killed outright: no stop came first. What it recorded, named with the code it had
    // mapped when it was last seen (its fork or exec; the started program's last library).
    // Reported once the ends that came with it are in (a process group dies at once: each
    // one's time ends at its death, not after another's report).
    end.outcome = killed_outright(SIGKILL);
    end.reported = true;
    Ending queued;
    queued.outcome = end.outcome;
    queued.stop = end.stop;
    queued.started_ns = end.started_ns;
    queued.stopped_ns = end.stopped_ns;
    queued.maps = end.maps;
    killed_.push_back(std::move(queued));
  }
  if (ev.pid == run_.pid) {
    root_end_ = std::move(end);
    root_end_->reported = root_end_->reported || let_die;  // (a death with a stop: reported at the stop)
    root_ended_at_ = Clock::now();
  }
}

void StopLoop::stopped(const tracer::StopEvent& ev) {
  int deliver = 0;
  const std::uint64_t now_ns = tracer::monotonic_ns();  // before the log's event: no branch is later
  if (ev.reason == tracer::StopReason::Signal) {
    const SignalInfo info = signal_info(target_, ev.tid);
    const bool from_fault = is_fault(ev.signal) && info.code > 0;
    log_.add("signal", ev.pid, ev.tid, signal_name(ev.signal), ev.signal);
    if (signal_kills(target_.signal_action(ev.tid, ev.signal), ev.signal, from_fault)) {
      Ending death;
      death.outcome = signal_outcome(ev, info);
      death.stop = ev;
      death.started_ns = fork_ns(log_, ev.pid);
      death.stopped_ns = now_ns;
      (void)died(death);  // resumed with its signal (or the run ends here)
      return;
    }
    deliver = ev.signal;
  } else if ((ev.reason == tracer::StopReason::Fork || ev.reason == tracer::StopReason::VFork) && o_.follow_fork) {
    // Recorded from birth; a vfork child from its exec on (the core's rule: until then it runs
    // in its parent's memory).
    (void)target_.enable_btrace(ev.child_pid, tracer::BtraceConfig{o_.ring_bytes});
    maps_.note(ev.child_pid);
  }
  if (ev.reason == tracer::StopReason::Exec) {
    maps_.note(ev.pid);
    if (ev.pid == run_.pid) {
      run_.maps = maps_.of(run_.pid);
    }
  }
  (void)target_.resume(continue_all(ev.tid, deliver));
}

}  // namespace

base::Result<Recorded> start_recorded(const Options& o, const Parts& parts, tracer::EventLog& log) {
  tracer::TargetRequest request;
  request.backend = o.btrace;
  request.unattended = true;
  request.follow_forks = o.follow_fork;
  request.launch = launch_spec(o);
  request.ring_bytes = o.ring_bytes;
  request.dbt_lib = parts.dbt_lib;
  request.recorder_lib = parts.recorder;
  request.keep_rings_in = o.keep_rings;
  request.log = &log;
  auto opened = tracer::open_target(request);
  if (!opened) {
    return std::move(opened).error();
  }
  Recorded run{std::move(opened->target), *opened->pid, opened->backend, {}, {}};
  for (const auto& skipped : opened->not_used) {
    run.not_used.push_back(std::string(tracer::backend_name(skipped.backend)) + ": " + skipped.why);
  }
  return run;
}

Ending run_to_end(Recorded& run, const Options& o, tracer::EventLog& log, const volatile std::sig_atomic_t& stop_requested,
                  const OnDeath& on_death) {
  return StopLoop(run, o, log, stop_requested, on_death).run();
}

void kill_tree(Recorded& run, const Ending& ending, tracer::EventLog& log, const OnDeath& on_death) {
  for (tracer::Target* t : {ending.own_target.get(), run.target.get()}) {
    if (t != nullptr && (t->has_process() || t->descendants_alive())) {
      (void)t->kill();  // (the run's target: every process of the tree, followed ones too)
    }
  }
  if (!ending.cut_short || !on_death) {
    return;
  }
  // The followed ones come as they are reaped (by their parent, or by triage: the reaper of
  // each whose parent died with it).
  const auto give_up = Clock::now() + std::chrono::seconds(10);
  while (Clock::now() < give_up) {
    auto dying = run.target->take_dying_descendant();
    if (!dying) {
      if (!run.target->descendants_alive()) {
        break;
      }
      ::poll(nullptr, 0, 20);
      continue;
    }
    Ending death = dying_descendant_ending(*dying, log);
    death.started_ns = fork_ns(log, death.stop.pid);
    if (death.stop.reason == tracer::StopReason::Killed) {  // by us: still running at the cut
      death.outcome = *ending.cut_short;
      death.outcome.killed = true;
    }
    on_death(death);  // (one that had begun to die of its own signal: reported as that)
    if (death.own_target && death.own_target->has_process()) {
      (void)death.own_target->kill();
    }
  }
}

}  // namespace server::triage
