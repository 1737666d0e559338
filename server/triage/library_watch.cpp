#include "server/triage/library_watch.hpp"


#include "tracer/symbols/symbolizer.hpp"

namespace server::triage {

void LibraryWatch::start(tracer::Target& target, tracer::Pid pid, tracer::EventLog& log) {
  auto symbols = tracer::Symbolizer::for_process(pid);
  if (!symbols) {
    return;
  }
  // glibc's ld-linux-x86-64.so.2 and musl's ld-musl-x86_64.so.1 both call it.
  auto at = (*symbols)->find_symbol("ld-", "_dl_debug_state");
  if (at && target.insert_breakpoint(tracer::BreakpointType::Software, *at, 1)) {
    breakpoint_ = at;
  }
  compare(target, pid, log);
}

bool LibraryWatch::handle(tracer::Target& target, const tracer::StopEvent& ev, tracer::EventLog& log) {
  if (!breakpoint_ || ev.reason != tracer::StopReason::SoftwareBreakpoint) {
    return false;
  }
  auto pc = target.read_pc(ev.tid);
  if (!pc || *pc != *breakpoint_) {
    return false;
  }
  compare(target, ev.pid, log);
  return true;
}

std::optional<tracer::StopEvent> LibraryWatch::step_over(tracer::Target& target, const tracer::StopEvent& ev,
                                                         const std::function<std::optional<tracer::StopEvent>()>& wait) {
  // As GDB does for its breakpoints: out, one step of that thread alone, back in.
  (void)target.remove_breakpoint(tracer::BreakpointType::Software, *breakpoint_, 1);
  tracer::ResumePlan step;
  step.actions.push_back(tracer::ThreadAction{ev.tid, 0, tracer::ResumeKind::Step, 0});
  std::optional<tracer::StopEvent> after;
  if (target.resume(step)) {
    after = wait();
  }
  (void)target.insert_breakpoint(tracer::BreakpointType::Software, *breakpoint_, 1);
  if (after && after->reason == tracer::StopReason::SingleStep && after->tid == ev.tid) {
    return std::nullopt;
  }
  return after;
}

void LibraryWatch::compare(tracer::Target& target, tracer::Pid pid, tracer::EventLog& log) {
  auto list = target.libraries();
  if (!list) {
    return;
  }
  std::set<std::string> now;
  for (const auto& lib : list->libraries) {
    if (!lib.name.empty()) {
      now.insert(lib.name);
    }
  }
  for (const auto& name : now) {
    if (loaded_.count(name) == 0) {
      log.add("library_load", pid, pid, name);
    }
  }
  for (const auto& name : loaded_) {
    if (now.count(name) == 0) {
      log.add("library_unload", pid, pid, name);
    }
  }
  loaded_ = std::move(now);
}

}  // namespace server::triage
