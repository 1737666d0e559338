#include "server/triage/runner.hpp"

#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <map>
#include <set>
#include <utility>

#include "arch/x86/i386_siginfo.hpp"
#include "server/triage/library_watch.hpp"
#include "server/triage/mapped_files.hpp"
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

// Waits up to `wait` for the target's next stop, or for a descendant that may be dying.
std::optional<tracer::StopEvent> next_stop(tracer::Target& target, std::chrono::milliseconds wait) {
  if (auto ev = target.poll()) {
    return ev;
  }
  pollfd fds[2] = {{target.event_fd(), POLLIN, 0}, {target.descendants_fd(), POLLIN, 0}};
  if (::poll(fds, 2, static_cast<int>(wait.count())) > 0 && fds[0].revents != 0) {
    return target.poll();
  }
  return std::nullopt;
}

// Resumes the thread that stopped with signo, delivering it, and waits (up to 10 s) for the
// process to end of it; kills it when it does not.
void let_it_die(tracer::Target& target, tracer::Pid pid, tracer::Tid tid, int signo) {
  if (target.resume(continue_all(tid, signo))) {
    const auto deadline = Clock::now() + std::chrono::seconds(10);
    while (Clock::now() < deadline && target.has_process()) {
      auto ev = next_stop(target, std::chrono::milliseconds(100));
      if (ev && (ev->reason == tracer::StopReason::Exited || ev->reason == tracer::StopReason::Killed) &&
          ev->pid == pid) {
        return;
      }
      if (ev) {
        (void)target.resume(continue_all(ev->tid, ev->reason == tracer::StopReason::Signal ? ev->signal : 0));
      }
    }
  }
  if (target.has_process()) {
    (void)target.kill();
  }
}

// A process that ended of signo with no stop first (SIGKILL): no siginfo, nothing to let die.
Outcome killed_outright(int signo) {
  Outcome o;
  o.kind = Outcome::Kind::Signal;
  o.signo = signo;
  o.exit_status = 128 + signo;
  return o;
}

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

}  // namespace

base::Result<Recorded> start_recorded(const Options& o, const std::string& dbt_lib, tracer::EventLog& log) {
  tracer::TargetRequest request;
  request.backend = o.btrace;
  request.unattended = true;
  request.follow_forks = o.follow_fork;
  request.launch = launch_spec(o);
  request.ring_bytes = o.ring_bytes;
  request.dbt_lib = dbt_lib;
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
                  const DescendantCrash& on_descendant_crash) {
  tracer::Target& target = *run.target;
  Ending end;
  const auto deadline = o.timeout > 0 ? Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                                          std::chrono::duration<double>(o.timeout))
                                      : Clock::time_point::max();
  bool timed_out = false;
  log.add("thread_start", run.pid, run.pid, o.program.front());
  LibraryWatch libraries;
  libraries.start(target, run.pid, log);
  run.maps = read_maps(run.pid);
  std::optional<tracer::StopEvent> carried;  // a stop that came while stepping over the watch
  std::set<tracer::Pid> record_after_exec;   // vfork children, not recording until they exec
  std::map<tracer::Pid, std::string> child_maps;  // followed descendants' maps as last seen
  if (auto ok = target.resume(continue_all()); !ok) {
    end.outcome.kind = Outcome::Kind::Exit;
    end.outcome.exit_status = kExitTriageFailed;
    return end;
  }
  while (true) {
    if (stop_requested != 0) {
      end.interrupted = true;
      end.stop_signal = stop_requested;
      return end;
    }
    if (!timed_out && Clock::now() >= deadline) {
      timed_out = true;
      if (!target.interrupt()) {  // nothing to stop it through (dbt: it exec'd): ended as it is
        end.outcome.kind = Outcome::Kind::Timeout;
        end.outcome.exit_status = kExitTimeout;
        return end;
      }
    }
    auto ev = carried ? std::exchange(carried, std::nullopt) : next_stop(target, std::chrono::milliseconds(50));
    while (auto dying = target.take_dying_descendant()) {
      Ending crash = dying_descendant_ending(*dying, log);
      if (crash.stop.pid == run.pid || !on_descendant_crash) {
        return crash;  // the started program itself (after an exec), or the first crash anywhere
      }
      on_descendant_crash(crash);  // reported; it dies as it would have, the run goes on
      if (crash.own_target->has_process()) {
        let_it_die(*crash.own_target, crash.stop.pid, crash.stop.tid, crash.outcome.signo);
      }
    }
    if (!ev) {
      continue;
    }
    end.stopped_ns = tracer::monotonic_ns();  // when this stop came: the one the run may end with
    if (ev->reason == tracer::StopReason::Exited || ev->reason == tracer::StopReason::Killed) {
      const bool main = ev->pid == run.pid;
      log.add(ev->reason == tracer::StopReason::Exited ? "exit" : "killed", ev->pid, ev->tid, {},
              ev->reason == tracer::StopReason::Exited ? ev->status : ev->signal);
      if (main) {
        end.outcome.kind = ev->reason == tracer::StopReason::Exited ? Outcome::Kind::Exit : Outcome::Kind::Signal;
        end.outcome.signo = ev->signal;
        end.outcome.exit_status = ev->reason == tracer::StopReason::Exited ? ev->status : 128 + ev->signal;
        end.stop = *ev;
        return end;
      }
      if (ev->reason == tracer::StopReason::Killed && ev->signal == SIGKILL && on_descendant_crash) {
        // Killed outright: no stop came first. What it recorded, named with the code it had
        // mapped when it was last seen (its fork or exec).
        Ending killed;
        killed.outcome = killed_outright(SIGKILL);
        killed.stop = *ev;
        killed.stopped_ns = end.stopped_ns;
        killed.maps = child_maps[ev->pid];
        on_descendant_crash(killed);
      }
      child_maps.erase(ev->pid);
      (void)target.resume(continue_all());
      continue;
    }
    if (timed_out) {
      end.outcome.kind = Outcome::Kind::Timeout;
      end.outcome.exit_status = kExitTimeout;
      end.stop = *ev;
      return end;
    }
    int deliver = 0;
    if (libraries.handle(target, *ev, log)) {
      run.maps = read_maps(run.pid);  // what a report after its death names code with
      // The dynamic linker changed its list: logged; past the breakpoint, and on it goes.
      carried = libraries.step_over(target, *ev, [&] {
        std::optional<tracer::StopEvent> next;
        for (int i = 0; i < 200 && !next; ++i) {
          next = next_stop(target, std::chrono::milliseconds(50));
        }
        return next;
      });
      if (carried) {
        continue;
      }
    } else if (ev->reason == tracer::StopReason::Signal) {
      const SignalInfo info = signal_info(target, ev->tid);
      const bool from_fault = is_fault(ev->signal) && info.code > 0;
      log.add("signal", ev->pid, ev->tid, signal_name(ev->signal), ev->signal);
      if (signal_kills(target.signal_action(ev->tid, ev->signal), ev->signal, from_fault)) {
        end.outcome = signal_outcome(*ev, info);
        end.stop = *ev;
        if (ev->pid == run.pid || !on_descendant_crash) {
          return end;
        }
        on_descendant_crash(end);  // reported; it dies as it would have, the run goes on
        end = Ending{};
      }
      deliver = ev->signal;
    } else if (ev->reason == tracer::StopReason::Fork && o.follow_fork) {
      (void)target.enable_btrace(ev->child_pid, tracer::BtraceConfig{o.ring_bytes});
      child_maps[ev->child_pid] = read_maps(ev->child_pid);
    } else if (ev->reason == tracer::StopReason::VFork && o.follow_fork) {
      // It runs in its parent's memory until it execs or exits: a collector planting int3s
      // there would plant them in the parent. Recorded from its exec on.
      record_after_exec.insert(ev->child_pid);
    } else if (ev->reason == tracer::StopReason::Exec && record_after_exec.erase(ev->pid) != 0) {
      (void)target.enable_btrace(ev->pid, tracer::BtraceConfig{o.ring_bytes});
    }
    if (ev->reason == tracer::StopReason::Exec && ev->pid != run.pid) {
      child_maps[ev->pid] = read_maps(ev->pid);
    }
    (void)target.resume(continue_all(ev->tid, deliver));
  }
}

void finish(Recorded& run, const Ending& ending) {
  tracer::Target& target = target_of(run, ending);
  if (target.has_process()) {
    if (ending.outcome.kind == Outcome::Kind::Signal && !ending.interrupted) {
      let_it_die(target, ending.stop.pid, ending.stop.tid, ending.outcome.signo);
    } else {
      (void)target.kill();
    }
  }
  if (ending.own_target && ending.stop.pid == run.pid) {
    // The started program, unlinked since its exec, is the process that died: reaped here.
    const auto deadline = Clock::now() + std::chrono::seconds(10);
    while (run.target->has_process() && !run.target->poll() && Clock::now() < deadline) {
      ::usleep(10000);
    }
  }
}

}  // namespace server::triage
