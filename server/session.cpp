#include "server/session.hpp"

#include <csignal>

#include <fmt/format.h>

#include "base/log.hpp"
#include "protocol/errors.hpp"
#include "protocol/signals.hpp"
#include "protocol/stop_reply.hpp"
#include "server/dispatch.hpp"
#include "server/handlers/handlers.hpp"
#include "tracer/trace/experiment.hpp"

namespace server {
namespace {

// Packets in the log are cut here; binary replies can be 128 KiB.
constexpr std::size_t kLogLimit = 400;

std::string loggable(std::string_view payload) {
  std::string out;
  for (char c : payload.substr(0, kLogLimit)) {
    auto u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u < 0x7f) {
      out += c;
    } else {
      out += fmt::format("\\x{:02x}", u);
    }
  }
  if (payload.size() > kLogLimit) {
    out += fmt::format("...[{} bytes]", payload.size());
  }
  return out;
}

}  // namespace

void Session::on_bytes(std::string_view bytes) {
  events_.clear();
  decoder_.feed(bytes, events_);
  for (auto& ev : events_) {
    if (cx_.state.end_session) {
      return;
    }
    using Kind = protocol::FrameEvent::Kind;
    switch (ev.kind) {
      case Kind::Packet:
        base::logf(base::LogCat::rsp, "<- ${}", loggable(ev.payload));
        if (!cx_.state.no_ack) {
          write_("+");
        }
        on_packet(ev.payload);
        break;
      case Kind::BadChecksum:
        base::logf(base::LogCat::rsp, "<- bad checksum, asking again");
        if (!cx_.state.no_ack) {
          write_("-");
        }
        break;
      case Kind::Overlong:
        base::logf(base::LogCat::rsp, "<- packet longer than {} bytes dropped", protocol::kMaxPacketSize);
        if (!cx_.state.no_ack) {
          write_("+");
        }
        send_packet(protocol::encode_error(base::make_error(base::Errc::malformed, "packet too long"),
                                           protocol::ErrStyle::Code));
        break;
      case Kind::Interrupt:
        base::logf(base::LogCat::rsp, "<- interrupt (0x03)");
        if (!cx_.state.permissions.stop) {
          base::logf(base::LogCat::session, "interrupt ignored: GDB's QAllow forbids stopping the program");
        } else if (waiting_for_stop_) {
          if (auto ok = cx_.target.interrupt(); !ok) {
            base::logf(base::LogCat::session, "interrupt failed: {}", ok.error().message());
          }
        } else {
          // Between a stop reply and GDB's next resume (GDB single-stepping a software
          // watchpoint): the next resume stops at once with SIGINT.
          interrupt_pending_ = true;
        }
        break;
      case Kind::Nack:
        if (!last_sent_.empty()) {
          write_(last_sent_);
        }
        break;
      case Kind::Ack:
        break;
    }
  }
}

void Session::on_packet(std::string_view payload) {
  Reply reply = dispatch_packet(cx_, payload);
  for (const auto& line : cx_.console) {
    send_packet(protocol::encode_console_output(line));
  }
  cx_.console.clear();
  switch (reply.kind) {
    case Reply::Kind::Packet:
      send_packet(reply.payload);
      break;
    case Reply::Kind::None:
      break;
    case Reply::Kind::WaitForStop:
      waiting_for_stop_ = true;
      if (interrupt_pending_) {
        interrupt_pending_ = false;
        (void)cx_.target.interrupt();
      }
      // A pending event may already be waiting: report it without running anything.
      on_target_event();
      break;
  }
}

void Session::on_target_event() {
  while (auto event = cx_.target.poll()) {
    if (cx_.state.non_stop) {
      notify_stop(*event);
      continue;
    }
    if (!waiting_for_stop_) {
      // Nobody asked (GDB gone or between packets): remember it for '?'.
      base::logf(base::LogCat::session, "stop with no resume pending (thread {})", event->tid);
    }
    report_stop(*event);
    if (cx_.state.end_session) {
      return;
    }
  }
}

// Non-stop: a stop joins the queue GDB drains with vStopped; only the first one of an empty
// queue is announced with a %Stop notification.
void Session::notify_stop(const tracer::StopEvent& event) {
  std::string reply = report_stop_event(cx_, event);
  auto& queue = cx_.state.stop_notifications;
  queue.push_back({reply, event});
  if (queue.size() == 1) {
    base::logf(base::LogCat::rsp, "-> %Stop:{}", loggable(reply));
    write_(protocol::encode_notification("Stop:" + reply));
  }
}

namespace {

// The line gdbserver prints at its terminal when a program ends; empty for other stops.
std::string end_notice(const tracer::StopEvent& event) {
  if (event.reason == tracer::StopReason::Exited) {
    return "\nChild exited with status " + std::to_string(event.status);
  }
  if (event.reason == tracer::StopReason::Killed) {
    return fmt::format("\nChild terminated with signal = {:#x} ({})", event.signal,
                       protocol::gdb_signal_name(protocol::gdb_signal_from_host(event.signal)));
  }
  return {};
}

}  // namespace

void Session::report_stop(const tracer::StopEvent& event) {
  std::string reply = report_stop_event(cx_, event);
  // Over stdio the user sees the end in GDB's own output: gdbserver says nothing there.
  if (auto line = end_notice(event); !line.empty() && !cx_.options.stdio_is_protocol) {
    cx_.notice(line);
  }
  if (waiting_for_stop_) {
    waiting_for_stop_ = false;
    send_packet(reply);
  }
  // After the last process's end GDB may still ask (GDB 16 reads the files of an inferior it
  // keeps): as gdbserver, the session lasts until GDB closes it, and a server outside extended
  // mode with nothing left then exits.
}

void Session::on_disconnect() {
  // A trace run goes on without GDB only if GDB said so (QTDisconnected:1); then a running
  // program keeps running, collecting, as with gdbserver.
  tracer::trace::Experiment* trace = cx_.target.experiment();
  const bool trace_goes_on = trace != nullptr && trace->running() && trace->disconnected_tracing;
  if (!trace_goes_on) {
    end_trace_run(cx_, tracer::trace::StopReason::Disconnected);
  }
  if (waiting_for_stop_ && cx_.target.has_process() && !trace_goes_on) {
    (void)cx_.target.interrupt();
  }
  if (cx_.state.non_stop) {
    (void)cx_.target.set_non_stop(false);  // the next GDB starts in all-stop
  }
  waiting_for_stop_ = false;
  cx_.host.end_session();
}

bool Session::console_output(const std::string& text) {
  if (!waiting_for_stop_ || cx_.state.non_stop) {
    return false;
  }
  send_packet(protocol::encode_console_output(text));
  return true;
}

void Session::send_packet(const std::string& payload) {
  base::logf(base::LogCat::rsp, "-> ${}", loggable(payload));
  last_sent_ = protocol::encode_packet(payload);
  write_(last_sent_);
}

}  // namespace server
