// vCont? vCont c C s S ?: resuming, and what the last stop was.
#include <algorithm>
#include <csignal>

#include "protocol/signals.hpp"
#include "server/handlers/handlers.hpp"

namespace server {
namespace {

base::Result<tracer::ThreadAction> to_thread_action(const protocol::VContAction& a) {
  tracer::ThreadAction out;
  if (a.thread && a.thread->tid > 0) {
    out.tid = static_cast<tracer::Tid>(a.thread->tid);
  } else if (a.thread && a.thread->pid > 0) {
    out.pid = static_cast<tracer::Pid>(a.thread->pid);  // pPID.-1: every thread of PID
  }
  if (a.gdb_signal != 0) {
    out.signal = protocol::host_signal_from_gdb(a.gdb_signal);
    if (out.signal == 0) {
      return base::make_error(base::Errc::invalid, "signal has no Linux equivalent");
    }
  }
  switch (a.action) {
    case 'c': out.kind = tracer::ResumeKind::Continue; break;
    case 's': out.kind = tracer::ResumeKind::Step; break;
    case 't': out.kind = tracer::ResumeKind::Stop; break;
    case 'r':
      out.kind = tracer::ResumeKind::RangeStep;
      out.range_start = a.range_start;
      out.range_end = a.range_end;
      break;
    default: return base::make_error(base::Errc::malformed, "unknown vCont action");
  }
  return out;
}

bool unknown_process(Context& cx, const protocol::VContAction& a) {
  if (!a.thread || a.thread->pid <= 0) {
    return false;
  }
  const auto pids = cx.target.processes();
  return std::find(pids.begin(), pids.end(), a.thread->pid) == pids.end();
}

// All-stop: the stop reply comes when the program stops. Non-stop: OK now, stops as
// notifications.
HandlerResult start(Context& cx, const tracer::ResumePlan& plan) {
  if (auto ok = cx.target.resume(plan); !ok) {
    return ok.error();
  }
  if (cx.state.non_stop) {
    return Reply::ok();
  }
  return Reply::wait_for_stop();
}

HandlerResult legacy_resume(Context& cx, const protocol::LegacyResume& req, tracer::ResumeKind kind) {
  if (auto ok = require_process(cx); !ok) {
    return ok.error();
  }
  tracer::Tid tid = cx.state.continue_thread;
  if (req.addr) {
    auto thread = current_thread(cx);
    if (!thread) {
      return thread.error();
    }
    if (auto ok = cx.target.write_pc(tid > 0 ? tid : *thread, *req.addr); !ok) {
      return ok.error();
    }
  }
  tracer::ResumePlan plan;
  tracer::ThreadAction action;
  action.kind = kind;
  action.signal = req.gdb_signal != 0 ? protocol::host_signal_from_gdb(req.gdb_signal) : 0;
  if (kind == tracer::ResumeKind::Step) {
    // A step applies to the selected thread; the others stay stopped.
    auto thread = tid > 0 ? base::Result<tracer::Tid>(tid) : current_thread(cx);
    if (!thread) {
      return thread.error();
    }
    action.tid = *thread;
  } else {
    action.tid = tid > 0 ? tid : tracer::kAllThreads;
  }
  plan.actions.push_back(action);
  if (action.tid != tracer::kAllThreads && kind == tracer::ResumeKind::Continue) {
    tracer::ThreadAction others;
    plan.actions.push_back(others);
  }
  return start(cx, plan);
}

}  // namespace

HandlerResult on_vcont_query(Context& /*cx*/, std::string_view /*body*/) {
  return Reply::packet(protocol::vcont_supported_reply());
}

HandlerResult on_vcont(Context& cx, const std::vector<protocol::VContAction>& actions) {
  // Non-stop: GDB may name threads whose exit it has just been told of (stopping everything
  // after a process exited); as gdbserver, they are skipped, and nothing left to do is OK.
  const bool lenient = cx.state.non_stop;
  if (auto ok = require_process(cx); !ok) {
    return lenient ? HandlerResult(Reply::ok()) : ok.error();
  }
  tracer::ResumePlan plan;
  for (const auto& a : actions) {
    if (unknown_process(cx, a)) {
      continue;
    }
    if (a.thread && a.thread->tid > 0 && !cx.target.thread_alive(static_cast<tracer::Tid>(a.thread->tid))) {
      if (lenient) {
        continue;
      }
      return base::make_error(base::Errc::no_thread, "vCont names a thread that does not exist");
    }
    auto action = to_thread_action(a);
    if (!action) {
      return action.error();
    }
    plan.actions.push_back(*action);
  }
  if (plan.actions.empty()) {
    if (lenient) {
      return Reply::ok();
    }
    return base::make_error(base::Errc::invalid, "vCont resumes nothing of this process");
  }
  // Non-stop: stops GDB has not pulled yet with vStopped are news to it; a wildcard leaves
  // those threads, and the threads and fork children they announce, as they are (as gdbserver
  // does). GDB sends `c` for everything while a %Stop is on its way to it.
  for (const auto& queued : cx.state.stop_notifications) {
    plan.unannounced_threads.insert(queued.event.tid);
    if (queued.event.child_tid != 0) {
      plan.unannounced_threads.insert(queued.event.child_tid);
    }
    if (queued.event.child_pid != 0) {
      plan.unannounced_children.insert(queued.event.child_pid);
    }
  }
  return start(cx, plan);
}

HandlerResult on_continue(Context& cx, const protocol::LegacyResume& req) {
  return legacy_resume(cx, req, tracer::ResumeKind::Continue);
}

HandlerResult on_step(Context& cx, const protocol::LegacyResume& req) {
  return legacy_resume(cx, req, tracer::ResumeKind::Step);
}

HandlerResult on_stop_reason(Context& cx, std::string_view /*body*/) {
  if (!cx.target.has_process()) {
    // Extended mode before `run`: "no process" in the form GDB expects.
    return Reply::packet(cx.state.non_stop ? "OK" : "W00");
  }
  if (cx.state.non_stop) {
    // Every stopped thread's stop: the first now, the others through vStopped.
    auto& queue = cx.state.stop_notifications;
    queue.clear();
    auto first = current_thread(cx);
    if (first) {
      cx.target.run_unannounced(*first);
    }
    for (const auto& t : cx.target.threads()) {
      if (t.resumed) {
        continue;  // running as GDB knows it: nothing to report
      }
      tracer::StopEvent event;
      event.pid = t.pid;
      event.tid = t.tid;
      event.signal = 0;
      if (cx.server.last_stop && cx.server.last_stop->tid == t.tid) {
        event = *cx.server.last_stop;
      } else if (first && *first == t.tid) {
        event.signal = SIGTRAP;
      }
      std::string reply = encode_stop_event(cx, event);
      if (first && *first == t.tid) {
        queue.push_front({std::move(reply), event});
      } else {
        queue.push_back({std::move(reply), event});
      }
    }
    if (first) {
      record_reported_stop(cx, tracer::StopEvent{tracer::StopReason::Signal, cx.target.process_of(*first), *first,
                                                 SIGTRAP});
    }
    return Reply::packet(queue.empty() ? "OK" : queue.front().reply);
  }
  if (cx.target.running()) {
    // Left running by a GDB that went away (disconnected tracing): stopped for this one.
    if (auto ok = cx.target.interrupt(); !ok) {
      return ok.error();
    }
    return Reply::wait_for_stop();
  }
  if (cx.server.last_stop) {
    tracer::StopEvent event = *cx.server.last_stop;
    return Reply::packet(report_stop_event(cx, event));
  }
  auto tid = current_thread(cx);
  if (!tid) {
    return tid.error();
  }
  tracer::StopEvent event;
  event.pid = cx.target.pid();
  event.tid = *tid;
  event.signal = SIGTRAP;  // stopped, nothing more specific known
  return Reply::packet(report_stop_event(cx, event));
}

// vStopped: GDB took the stop at the head of the queue; the next one, or OK.
HandlerResult on_vstopped(Context& cx, std::string_view /*body*/) {
  auto& queue = cx.state.stop_notifications;
  if (!queue.empty()) {
    queue.pop_front();
  }
  return Reply::packet(queue.empty() ? "OK" : queue.front().reply);
}

// vCtrlC (non-stop): the program stops as with ^C; the stop comes as a notification.
HandlerResult on_vctrlc(Context& cx, std::string_view /*body*/) {
  if (auto ok = require_process(cx); !ok) {
    return ok.error();
  }
  if (!cx.state.permissions.stop) {
    return base::make_error(base::Errc::invalid, "not allowed: GDB's QAllow forbids stopping the program");
  }
  if (auto ok = cx.target.interrupt(); !ok) {
    return ok.error();
  }
  return Reply::ok();
}

}  // namespace server
