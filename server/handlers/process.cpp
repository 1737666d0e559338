// D k vKill vRun vAttach R: the life of the inferior as GDB drives it.
#include <algorithm>
#include <csignal>

#include "server/handlers/handlers.hpp"
#include "server/handlers/launch.hpp"

namespace server {
namespace {

// Outside extended mode the server's work is done once its last process is gone.
void process_gone(Context& cx) {
  cx.state.xfer_cache.clear();
  cx.server.last_stop.reset();
  if (!cx.server.extended && !cx.target.has_process()) {
    cx.state.end_session = true;
  }
}

// The process a D / vKill names (the current one when it names none).
base::Result<tracer::Pid> named_process(Context& cx, const std::optional<std::int64_t>& pid) {
  if (auto ok = require_process(cx); !ok) {
    return ok.error();
  }
  if (!pid) {
    return cx.target.pid();
  }
  const auto pids = cx.target.processes();
  if (std::find(pids.begin(), pids.end(), *pid) == pids.end()) {
    return base::make_error(base::Errc::no_process, "no such process");
  }
  return static_cast<tracer::Pid>(*pid);
}

// A second process while one is debugged: only where GDB can tell them apart.
base::Result<void> may_add_process(Context& cx) {
  if (cx.target.has_process() && !cx.state.multiprocess) {
    return base::make_error(base::Errc::invalid, "a process is already being debugged; kill it first");
  }
  return base::success();
}

// Starts the program as the settings say, in gdbserver's words on the server's terminal.
base::Result<tracer::Pid> start_program(Context& cx, const std::vector<std::string>& program, bool args_are_line) {
  const tracer::LaunchSpec spec = launch_spec(cx.options, cx.server, program, args_are_line);
  auto pid = cx.target.launch(spec);
  if (!pid) {
    cx.notice(pid.error().message());
    return pid.error();
  }
  cx.server.last_program = program;
  cx.server.last_args_are_line = args_are_line;
  cx.state.xfer_cache.clear();
  cx.notice("Process " + spec.program + " created; pid = " + std::to_string(*pid));
  return pid;
}

}  // namespace

HandlerResult on_detach(Context& cx, const std::optional<std::int64_t>& pid) {
  auto which = named_process(cx, pid);
  if (!which) {
    return which.error();
  }
  // With disconnected tracing a running trace experiment goes on, as with gdbserver: the
  // server stays attached and the program runs on, collecting, until a GDB comes back.
  if (const tracer::trace::Experiment* trace = cx.target.experiment();
      trace != nullptr && trace->running() && trace->disconnected_tracing) {
    cx.notice("Disconnected tracing in effect, leaving hindsight attached to the process");
    if (auto ok = cx.target.resume(tracer::ResumePlan{{tracer::ThreadAction{}}}); !ok) {
      return ok.error();
    }
    return Reply::ok();
  }
  cx.notice("Detaching from process " + std::to_string(*which));
  // Otherwise a trace run ends with the detach, as gdbserver's does.
  end_trace_run(cx, tracer::trace::StopReason::Requested);
  if (auto ok = cx.target.detach_process(*which); !ok) {
    return ok.error();
  }
  process_gone(cx);
  return Reply::ok();
}

HandlerResult on_kill(Context& cx, std::string_view /*body*/) {
  if (cx.target.has_process()) {
    (void)cx.target.kill();  // `k` has no reply, so there is nobody to tell of a failure
  }
  process_gone(cx);
  return Reply::none();
}

HandlerResult on_vkill(Context& cx, const std::optional<std::int64_t>& pid) {
  auto which = named_process(cx, pid);
  if (!which) {
    return which.error();
  }
  if (auto ok = cx.target.kill_process(*which); !ok) {
    return ok.error();
  }
  process_gone(cx);
  return Reply::ok();
}

HandlerResult on_vrun(Context& cx, const std::vector<std::string>& argv) {
  if (auto ok = may_add_process(cx); !ok) {
    return ok.error();
  }
  // single-inf-arg: at most one argument, the whole line.
  const bool as_line = cx.state.single_inferior_argument;
  if (as_line && argv.size() > 2) {
    return base::make_error(base::Errc::malformed, "more than one argument line");
  }
  std::vector<std::string> program = argv;
  if (program.empty() || program.front().empty()) {
    if (cx.server.last_program.empty()) {
      return base::make_error(base::Errc::invalid, "no program to run");
    }
    std::vector<std::string> args(program.size() > 1 ? program.begin() + 1 : program.end(), program.end());
    program = cx.server.last_program;
    if (!args.empty() || as_line != cx.server.last_args_are_line) {
      program.resize(1);
      program.insert(program.end(), args.begin(), args.end());
    }
  }
  auto pid = start_program(cx, program, as_line);
  if (!pid) {
    return pid.error();
  }
  tracer::StopEvent event;
  event.pid = *pid;
  event.tid = *pid;
  event.signal = SIGTRAP;
  return Reply::packet(report_stop_event(cx, event));
}

HandlerResult on_restart(Context& cx, std::string_view /*body*/) {
  if (!cx.server.extended) {
    return Reply::empty();  // as gdbserver: R means nothing outside extended mode
  }
  if (cx.target.has_process()) {
    (void)cx.target.kill();
  }
  process_gone(cx);
  if (!cx.server.last_program.empty()) {
    (void)start_program(cx, cx.server.last_program, cx.server.last_args_are_line);  // R has no reply: failures are on stderr
  }
  return Reply::none();
}

HandlerResult on_vattach(Context& cx, const std::optional<std::int64_t>& pid) {
  if (!pid || *pid <= 0 || *pid > 0x7fffffff) {
    return base::make_error(base::Errc::malformed, "vAttach needs a process id");
  }
  if (auto ok = may_add_process(cx); !ok) {
    return ok.error();
  }
  if (auto ok = cx.target.attach(static_cast<tracer::Pid>(*pid)); !ok) {
    cx.notice(ok.error().message());
    return ok.error();
  }
  cx.state.xfer_cache.clear();
  cx.notice("Attached; pid = " + std::to_string(*pid));
  if (cx.state.non_stop) {
    return Reply::ok();  // the threads run; their stops come as %Stop notifications
  }
  return Reply::packet(report_stop_event(cx, attach_stop(cx.target, static_cast<tracer::Pid>(*pid))));
}

}  // namespace server
