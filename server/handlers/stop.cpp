// Turns a tracer StopEvent into the T/W/X stop reply GDB expects.
#include "protocol/signals.hpp"
#include "protocol/stop_reply.hpp"
#include "server/handlers/handlers.hpp"

namespace server {
namespace {

protocol::StopReply::Why why_from(const tracer::StopEvent& event) {
  using Why = protocol::StopReply::Why;
  switch (event.reason) {
    case tracer::StopReason::SoftwareBreakpoint: return Why::SwBreak;
    case tracer::StopReason::HardwareBreakpoint: return Why::HwBreak;
    case tracer::StopReason::Watchpoint:
      switch (event.watch_kind) {
        case tracer::WatchKind::Write: return Why::Watch;
        case tracer::WatchKind::Read: return Why::ReadWatch;
        case tracer::WatchKind::Access: return Why::AccessWatch;
      }
      return Why::Watch;
    case tracer::StopReason::Fork: return Why::Fork;
    case tracer::StopReason::VFork: return Why::VFork;
    case tracer::StopReason::VForkDone: return Why::VForkDone;
    case tracer::StopReason::Clone: return Why::Clone;
    case tracer::StopReason::SyscallEntry: return Why::SyscallEntry;
    case tracer::StopReason::SyscallReturn: return Why::SyscallReturn;
    default: return Why::None;
  }
}

}  // namespace

std::string encode_stop_event(Context& cx, const tracer::StopEvent& event) {
  protocol::StopReply reply;
  reply.pid = event.pid;
  switch (event.reason) {
    case tracer::StopReason::Exited:
      reply.kind = protocol::StopReply::Kind::Exited;
      reply.exit_status = event.status;
      break;
    case tracer::StopReason::Killed:
      reply.kind = protocol::StopReply::Kind::Terminated;
      reply.gdb_signal = protocol::gdb_signal_from_host(event.signal);
      break;
    case tracer::StopReason::NoResumed:
      reply.kind = protocol::StopReply::Kind::NoResumed;
      return protocol::encode_stop_reply(reply, cx.state.multiprocess);
    case tracer::StopReason::ThreadExited:
      reply.kind = protocol::StopReply::Kind::ThreadExited;
      reply.exit_status = event.status;
      reply.thread = protocol::ThreadId{event.pid, event.tid};
      return protocol::encode_stop_reply(reply, cx.state.multiprocess);
    default: {
      reply.kind = protocol::StopReply::Kind::Stopped;
      reply.gdb_signal = event.signal == 0 ? 0 : protocol::gdb_signal_from_host(event.signal);
      reply.thread = protocol::ThreadId{event.pid, event.tid};
      reply.why = why_from(event);
      if ((reply.why == protocol::StopReply::Why::SwBreak && !cx.state.swbreak) ||
          (reply.why == protocol::StopReply::Why::HwBreak && !cx.state.hwbreak)) {
        reply.why = protocol::StopReply::Why::None;
      }
      reply.watch_addr = event.watch_addr;
      reply.syscall = event.syscall;
      reply.child = event.reason == tracer::StopReason::Clone ? protocol::ThreadId{event.pid, event.child_tid}
                                                              : protocol::ThreadId{event.child_pid, event.child_pid};
      reply.exec_path = event.exec_path;
      reply.thread_field = !cx.options.disabled(DisablePacket::Tthread);
      reply.signal_only = cx.options.disabled(DisablePacket::T);
      for (int regno : cx.target.register_roles(event.tid).expedited) {
        if (auto value = cx.target.read_register(event.tid, regno)) {
          reply.registers.emplace_back(regno, *value);
        }
      }
      break;
    }
  }
  return protocol::encode_stop_reply(reply, cx.state.multiprocess);
}

void record_reported_stop(Context& cx, const tracer::StopEvent& event) {
  const bool thread_stop = event.reason != tracer::StopReason::Exited && event.reason != tracer::StopReason::Killed &&
                           event.reason != tracer::StopReason::NoResumed &&
                           event.reason != tracer::StopReason::ThreadExited;
  if (thread_stop && !cx.state.non_stop) {
    // All-stop: the event thread becomes the general thread, as GDB assumes. In non-stop
    // GDB keeps track of Hg itself: changing it behind its back would answer its next `g`
    // with another thread's registers.
    cx.state.general_thread = event.tid;
    (void)cx.target.select_process(event.pid);
  }
  if (event.reason != tracer::StopReason::NoResumed && event.reason != tracer::StopReason::ThreadExited) {
    cx.server.last_stop = event;
  }
}

std::string report_stop_event(Context& cx, const tracer::StopEvent& event) {
  std::string reply = encode_stop_event(cx, event);
  record_reported_stop(cx, event);
  return reply;
}

}  // namespace server
