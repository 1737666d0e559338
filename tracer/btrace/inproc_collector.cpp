#include "tracer/btrace/inproc_collector.hpp"

#include <csignal>

#include "base/log.hpp"

namespace tracer {

base::Result<std::unique_ptr<BranchTracer>> InprocCollector::make(Tid /*tid*/, const BtraceConfig& config) {
  return std::unique_ptr<BranchTracer>(std::make_unique<SoftStepTracer>(config, std::string(backend())));
}

std::string recorder_refusal(const std::string& why) {
  return "the in-process recorder cannot come in: " + why;
}

base::Result<std::unique_ptr<Collector>> make_inproc_collector(const CollectorRequest& request) {
  const RecorderPortMaker* make_port = request.setup != nullptr ? &request.setup->recorder_port : nullptr;
  std::unique_ptr<RecorderPort> port =
      request.host != nullptr && make_port != nullptr && *make_port ? (*make_port)(*request.host) : nullptr;
  if (!port) {
    return base::make_error(base::Errc::unsupported, recorder_refusal("no recorder here"));
  }
  if (auto why = port->unfit(request.tid)) {
    return base::make_error(base::Errc::unsupported, recorder_refusal(*why));
  }
  return std::unique_ptr<Collector>(std::make_unique<InprocCollector>(std::move(port), *make_port));
}

void InprocCollector::code_changed() {
  SoftStepCollector::code_changed();
  if (port_) {
    port_->code_written();
  }
}

void InprocCollector::code_edited() {
  if (!port_) {
    return;
  }
  if (auto refreshed = port_->refresh(); !refreshed) {
    base::logf(base::LogCat::ptrace, "the recorder's translations are made afresh later: {}",
               refreshed.error().message());
  }
}

std::optional<std::string> InprocCollector::cannot_record(Tid tid) {
  if (!port_) {
    return std::nullopt;
  }
  auto why = port_->unfit(tid);
  return why ? std::optional<std::string>(recorder_refusal(*why)) : std::nullopt;
}

std::optional<Addr> InprocCollector::forked(Tid parent, Tid child) {
  if (!port_) {
    return std::nullopt;
  }
  auto moved = port_->out_at_birth(parent, child);
  return moved ? *moved : std::nullopt;
}

std::unique_ptr<Collector> InprocCollector::fork_heir(CollectorHost& child) {
  std::unique_ptr<RecorderPort> port = port_ && make_port_ ? make_port_(child) : nullptr;
  if (!port) {
    return nullptr;
  }
  port->inherit(*port_);
  return std::make_unique<InprocCollector>(std::move(port), make_port_);
}

void InprocCollector::exec_happened() {
  if (port_) {
    port_->exec_happened();
  }
}

void InprocCollector::release() {
  if (!port_) {
    return;
  }
  if (auto out = port_->unload(); !out) {
    base::logf(base::LogCat::ptrace, "the in-process recorder stays in: {}", out.error().message());
  }
}

bool InprocCollector::wants_step(Tid tid, Addr pc, int sig, bool core_steps, CollectorHost& host) {
  SoftStepTracer* s = stepper(tid);
  if (s == nullptr) {
    return false;
  }
  RecorderPort* port = port_.get();
  if (waiting_.erase(tid) != 0 && !core_steps && sig == 0) {
    return false;  // (it could not leave the cache at its stop: it runs on there)
  }
  if (core_steps || sig != 0 || port == nullptr) {
    // The core's own step, or a signal on its way to a handler (the step stops at its entry,
    // and the handler then runs in the cache): stepped and recorded as SoftStep does.
    return SoftStepCollector::wants_step(tid, pc, sig, core_steps, host);
  }
  if (auto entered = port->enter(tid, s->stats().capacity); !entered) {
    if (entered.error().code == base::Errc::not_yet) {
      // (after an exec, before the dynamic linker has handed over; inside a syscall) Faster run natively
      // to the next stop, a gap there, than stepped: the recorder is asked again at the next
      // resume, at the program's entry point at the latest (the dynamic linker's start-up is
      // the gap).
      if (auto entry = port->comes_in_at(); entry && *entry != pc && host.plant(*entry, *entry, {})) {
        entry_site_ = *entry;
      }
      native_[tid] = pc;
      return false;
    }
    base::logf(base::LogCat::ptrace, "thread {}: not into the recorder ({}): stepped instead", tid,
               entered.error().message());
    return SoftStepCollector::wants_step(tid, pc, sig, core_steps, host);
  }
  run_start_[tid] = pc;
  return false;
}

StopMeaning InprocCollector::thread_stopped(Tid tid, CollectorHost& host) {
  SoftStepTracer* s = stepper(tid);
  RecorderPort* port = port_.get();
  if (s != nullptr && native_.erase(tid) != 0) {
    if (auto at = native_stop(tid, host); at && s->stats().recorded != 0) {
      s->lost_track(*at);  // what it ran natively is not known
      // (Before it first recorded there is nothing to connect to: its history starts here.)
    }
    return StopMeaning::Program;
  }
  if (s == nullptr || port == nullptr || !port->inside(tid)) {
    return StopMeaning::Program;  // (a step of the collector's reports through stepped())
  }
  bool asked = false;
  if (!bring_out(tid, *s, *port, host, &asked)) {
    waiting_.insert(tid);
    return StopMeaning::Program;
  }
  // One that waited for the translation lock this one held can leave now.
  for (auto it = waiting_.begin(); it != waiting_.end();) {
    SoftStepTracer* w = stepper(*it);
    it = w == nullptr || !port->inside(*it) || bring_out(*it, *w, *port, host) ? waiting_.erase(it) : std::next(it);
  }
  // (Its translations went stale while other threads may run them: made afresh, all out.)
  return asked ? StopMeaning::OwnEdit : StopMeaning::Program;
}

std::optional<Addr> InprocCollector::native_stop(Tid tid, CollectorHost& host) {
  auto pc = host.pc(tid);
  if (!pc) {
    return std::nullopt;
  }
  // Trapped on an int3 (GDB's breakpoint, the one at the entry): it stands on the int3's address.
  const Addr int3 = *pc - 1;
  if (auto code = host.stop_si_code(tid); code && (*code == SI_KERNEL || *code == TRAP_BRKPT) &&
                                          (host.is_breakpoint_site(int3) || int3 == entry_site_)) {
    return int3;
  }
  return *pc;
}

bool InprocCollector::bring_out(Tid tid, SoftStepTracer& s, RecorderPort& port, CollectorHost& host, bool* asked) {
  auto left = port.leave(tid);
  if (!left && left.error().code == base::Errc::not_yet) {
    base::logf(base::LogCat::ptrace, "thread {}: {}: it leaves the recorder once that one has", tid,
               left.error().message());
    return false;
  }
  take_recorded(tid, s, port);
  if (!left) {
    base::logf(base::LogCat::ptrace, "thread {}: could not leave the recorder: {}", tid, left.error().message());
    return true;
  }
  came_out(tid, s, *left, false, host);
  if (asked != nullptr) {
    *asked = left->asked;
  }
  return true;
}

void InprocCollector::came_out(Tid tid, SoftStepTracer& s, const RecorderLeft& left, bool only_syscalled,
                               CollectorHost& host) {
  // Native code since it left the cache, past the place it left for (a trap there is not: an
  // int3 traps with pc one past it): what ran there is not known.
  const bool only_trapped = left.exited_at != 0 && (left.pc == left.exited_at || left.pc == left.exited_at + 1);
  if (left.ran_native && !only_trapped && !only_syscalled) {
    s.lost_track(left.pc);
  } else if (auto start = run_start_.find(tid); start != run_start_.end() && !left.ran_native) {
    ran_up_to(s, start->second, left.pc, host);
  }
}

bool InprocCollector::syscall_stopped(Tid tid, bool entry, bool caught, CollectorHost& host) {
  SoftStepTracer* s = stepper(tid);
  RecorderPort* port = port_.get();
  if (s == nullptr || port == nullptr) {
    return true;
  }
  if (auto native = native_.find(tid); native != native_.end()) {
    // It ran natively from its resume: only the call, when it stands where it was resumed at
    // the call's entry stop (the recorder could not come in there).
    auto pc = host.pc(tid);
    if (pc && (entry || *pc != native->second) && s->stats().recorded != 0) {
      s->lost_track(*pc);
    }
    native_.erase(native);
    return true;
  }
  if (!port->inside(tid)) {
    return SoftStepCollector::syscall_stopped(tid, entry, caught, host);  // (a step of its own)
  }
  auto at = port->at_syscall(tid, caught);
  if (!at) {
    base::logf(base::LogCat::ptrace, "thread {}: not moved out of the recorder at a syscall stop: {}", tid,
               at.error().message());
    return true;
  }
  if (at->recorders_own) {
    return false;
  }
  if (at->left) {
    take_recorded(tid, *s, *port);
    // (A native run that stopped at its first system call, the one it left the cache for: the
    // gate's way for a call that may change the mappings while syscalls are caught.)
    const bool only_syscalled = at->left->ran_native && at->left->pc == at->left->exited_at + 2;
    came_out(tid, *s, *at->left, only_syscalled, host);
  }
  return true;
}

void InprocCollector::take_recorded(Tid tid, SoftStepTracer& s, RecorderPort& port) {
  auto taken = port.take(tid);
  if (!taken) {
    base::logf(base::LogCat::ptrace, "thread {}: its recorded branches could not be read: {}", tid,
               taken.error().message());
    return;
  }
  if (taken->lost != 0 && !taken->samples.empty()) {
    s.lost_track(taken->samples.front().from);  // the ring went round between two stops
    s.missed(taken->lost);
  }
  for (const BranchSample& b : taken->samples) {
    s.took(b);
  }
  s.read_clock();  // (their times: spread between this stop and the one before)
  if (!taken->samples.empty()) {
    run_start_[tid] = taken->samples.back().to;
  }
}

void InprocCollector::thread_ended(Tid tid, CollectorHost& /*host*/) {
  SoftStepTracer* s = stepper(tid);
  RecorderPort* port = port_.get();
  if (s != nullptr && port != nullptr && native_.count(tid) == 0 && port->inside(tid)) {
    take_recorded(tid, *s, *port);  // (the ring outlives it where the server maps it too)
  }
  if (port != nullptr) {
    port->thread_gone(tid);
  }
  run_start_.erase(tid);
  native_.erase(tid);
  waiting_.erase(tid);
}

void InprocCollector::ran_up_to(SoftStepTracer& s, Addr start, Addr pc, CollectorHost& host) {
  constexpr Addr kLongestRun = 4096;  // (bytes of straight-line code looked through)
  for (Addr at = start; at < pc && pc - at <= kLongestRun;) {
    const arch::x86::InstructionInfo* insn = decode_at(at, host);
    if (insn == nullptr) {
      return;
    }
    if (at + insn->length == pc) {
      s.ran_through(at);
      return;
    }
    at += insn->length;
  }
}

}  // namespace tracer
