// Connection set-up, thread selection and listing, settings.
#include <algorithm>

#include <fmt/format.h>

#include "protocol/framing.hpp"
#include "protocol/hex.hpp"
#include "protocol/inferior_args.hpp"
#include "protocol/signals.hpp"
#include "server/handlers/handlers.hpp"

namespace server {
namespace {

std::set<int> to_host_signals(const std::set<int>& gdb_signals) {
  std::set<int> out;
  for (int sig : gdb_signals) {
    if (int host = protocol::host_signal_from_gdb(sig); host > 0) {
      out.insert(host);
    }
  }
  return out;
}

}  // namespace

HandlerResult on_qsupported(Context& cx, const std::vector<std::string>& gdb_features) {
  const auto features = negotiate_features(cx, gdb_features);
  // Events are reported as agreed (never agreed where the target cannot report them).
  cx.target.set_report_exec(cx.state.exec_events);
  cx.target.set_report_forks(cx.state.fork_events, cx.state.vfork_events);
  cx.target.set_report_no_resumed(cx.state.no_resumed);
  std::string reply = "PacketSize=" + protocol::hex_u64(protocol::kMaxPacketSize);
  for (const std::string& feature : features) {
    reply += ';';
    reply += feature;
  }
  return Reply::packet(reply);
}

HandlerResult on_start_no_ack(Context& cx, std::string_view /*body*/) {
  cx.state.no_ack = true;
  return Reply::ok();
}

HandlerResult on_set_thread(Context& cx, const protocol::SetThread& req) {
  if (!cx.target.has_process()) {
    return base::make_error(base::Errc::no_process, "no process");
  }
  const auto& id = req.thread;
  const auto pids = cx.target.processes();
  if (id.pid > 0 && std::find(pids.begin(), pids.end(), id.pid) == pids.end()) {
    return base::make_error(base::Errc::no_thread, "unknown process");
  }
  tracer::Tid tid = 0;  // any / all
  if (id.tid > 0) {
    tid = static_cast<tracer::Tid>(id.tid);
    if (!cx.target.thread_alive(tid) || (id.pid > 0 && cx.target.process_of(tid) != id.pid)) {
      return base::make_error(base::Errc::no_thread, "unknown thread");
    }
  }
  if (req.op == 'g') {
    // Hg also selects the process that memory, breakpoints and qXfer act on.
    if (tid != 0) {
      cx.state.general_thread = tid;
      (void)cx.target.select_process(cx.target.process_of(tid));
    } else if (id.pid > 0 && id.pid != cx.target.pid()) {
      (void)cx.target.select_process(static_cast<tracer::Pid>(id.pid));
      cx.state.general_thread = 0;
    }
  } else {
    cx.state.continue_thread = tid;
  }
  return Reply::ok();
}

HandlerResult on_thread_alive(Context& cx, const protocol::ThreadId& id) {
  if (cx.target.has_process() && id.tid > 0 && cx.target.thread_alive(static_cast<tracer::Tid>(id.tid)) &&
      (id.pid <= 0 || id.pid == cx.target.process_of(static_cast<tracer::Tid>(id.tid)))) {
    return Reply::ok();
  }
  return base::make_error(base::Errc::no_thread, "thread is not alive");
}

HandlerResult on_current_thread(Context& cx, std::string_view /*body*/) {
  auto tid = current_thread(cx);
  if (!tid) {
    return tid.error();
  }
  return Reply::packet("QC" + protocol::format_thread_id(wire_thread(cx, *tid), cx.state.multiprocess));
}

HandlerResult on_exec_and_args(Context& cx, std::string_view /*body*/) {
  const auto& program = cx.server.last_program;
  if (program.empty()) {
    return Reply::packet("U");
  }
  const std::vector<std::string> args(program.begin() + 1, program.end());
  const std::string line = !cx.server.last_args_are_line ? protocol::join_inferior_args(args)
                           : args.empty()                ? ""
                                                         : args.front();
  return Reply::packet("S;" + protocol::to_hex(program.front()) + ";" + protocol::to_hex(line) + ";");
}

HandlerResult on_thread_info_first(Context& cx, std::string_view /*body*/) {
  cx.state.thread_list_snapshot.clear();
  cx.state.thread_list_pos = 0;
  if (cx.target.has_process()) {
    for (const auto& t : cx.target.threads()) {
      cx.state.thread_list_snapshot.push_back(protocol::ThreadId{t.pid, t.tid});
    }
  }
  return on_thread_info_next(cx, "");
}

HandlerResult on_thread_info_next(Context& cx, std::string_view /*body*/) {
  auto& list = cx.state.thread_list_snapshot;
  if (cx.state.thread_list_pos >= list.size()) {
    return Reply::packet("l");
  }
  std::string reply = "m";
  // Several ids per reply, comma separated, as much as fits comfortably.
  for (std::size_t n = 0; cx.state.thread_list_pos < list.size() && n < 256; ++n) {
    if (n > 0) {
      reply += ',';
    }
    reply += protocol::format_thread_id(list[cx.state.thread_list_pos++], cx.state.multiprocess);
  }
  return Reply::packet(reply);
}

HandlerResult on_attached(Context& cx, const std::optional<std::int64_t>& pid) {
  if (!cx.target.has_process()) {
    return base::make_error(base::Errc::no_process, "no such process");
  }
  if (pid) {
    const auto pids = cx.target.processes();
    if (std::find(pids.begin(), pids.end(), *pid) == pids.end()) {
      return base::make_error(base::Errc::no_process, "no such process");
    }
    return Reply::packet(cx.target.attached_process(static_cast<tracer::Pid>(*pid)) ? "1" : "0");
  }
  return Reply::packet(cx.target.attached() ? "1" : "0");
}

HandlerResult on_non_stop(Context& cx, const bool& on) {
  if (auto ok = cx.target.set_non_stop(on); !ok) {
    return ok.error();
  }
  cx.state.non_stop = on;
  cx.state.stop_notifications.clear();
  return Reply::ok();
}

HandlerResult on_permissions(Context& cx, const std::vector<protocol::PermissionChange>& changes) {
  protocol::apply_permissions(changes, cx.state.permissions);
  return Reply::ok();
}

HandlerResult on_pass_signals(Context& cx, const std::vector<int>& signals) {
  cx.state.pass_signals = std::set<int>(signals.begin(), signals.end());
  cx.target.set_pass_signals(to_host_signals(cx.state.pass_signals));
  return Reply::ok();
}

HandlerResult on_program_signals(Context& cx, const std::vector<int>& signals) {
  cx.state.program_signals = std::set<int>(signals.begin(), signals.end());
  cx.state.program_signals_set = true;
  cx.target.set_program_signals(to_host_signals(cx.state.program_signals));
  return Reply::ok();
}

HandlerResult on_thread_events(Context& cx, const bool& on) {
  cx.state.thread_events = on;
  cx.target.set_report_thread_exits(on);
  return Reply::ok();
}

// QThreadOptions masks, as GDB_THREAD_OPTION_* of gdbsupport/gdb_thread_options.h.
constexpr std::uint32_t kCloneOption = 1;
constexpr std::uint32_t kExitOption = 2;

HandlerResult on_thread_options(Context& cx, const std::vector<protocol::ThreadOptionsEntry>& entries) {
  std::vector<tracer::ThreadOptionsRule> rules;
  for (const auto& e : entries) {
    if ((e.options & ~(kCloneOption | kExitOption)) != 0) {
      return base::make_error(base::Errc::invalid, fmt::format("unknown thread options requested: {:#x}", e.options));
    }
    tracer::ThreadOptionsRule rule{.options = {.clone_events = (e.options & kCloneOption) != 0,
                                               .exit_events = (e.options & kExitOption) != 0}};
    if (e.thread && e.thread->tid > 0) {
      rule.tid = static_cast<tracer::Tid>(e.thread->tid);
    } else if (e.thread && e.thread->pid > 0) {
      rule.pid = static_cast<tracer::Pid>(e.thread->pid);  // pPID, pPID.-1: every thread of PID
    }
    rules.push_back(rule);
  }
  auto ok = cx.target.set_thread_options(rules);
  if (!ok) {
    return ok.error();
  }
  return Reply::ok();
}

HandlerResult on_catch_syscalls(Context& cx, const protocol::CatchSyscalls& req) {
  if (!cx.target.has_process()) {
    return base::make_error(base::Errc::no_process, "no process to catch syscalls in");
  }
  auto ok = cx.target.set_catch_syscalls(tracer::SyscallCatch{req.enabled, req.numbers});
  if (!ok) {
    return ok.error();
  }
  return Reply::ok();
}

HandlerResult on_symbol(Context& /*cx*/, std::string_view /*body*/) {
  // libthread_db's symbols are read from the mapped files (tracer/thread_db): nothing to ask.
  return Reply::ok();
}

HandlerResult on_extended_mode(Context& cx, std::string_view /*body*/) {
  cx.server.extended = true;
  return Reply::ok();
}

}  // namespace server
