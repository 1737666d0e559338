// One GDB connection, without the socket: bytes from GDB in, bytes to GDB out through a
// callback, target events in. The transport (server.cpp) feeds it; tests and the
// fuzzer drive it directly.
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "protocol/framing.hpp"
#include "server/handlers/context.hpp"

namespace server {

class Session {
 public:
  using Writer = std::function<void(std::string_view bytes)>;

  Session(Context& cx, Writer write) : cx_(cx), write_(std::move(write)) {}

  // Bytes GDB sent, split anywhere.
  void on_bytes(std::string_view bytes);
  // The target's event fd became readable (or may have): report a stop if one is ready.
  void on_target_event();
  // GDB went away: a running inferior is stopped so the next GDB finds it stopped.
  void on_disconnect();
  // text for GDB's console while the program runs: an `O` packet, which GDB prints and then
  // waits on. Only while GDB waits for an all-stop stop reply (non-stop has no `O`): false, not
  // sent, at any other time.
  bool console_output(const std::string& text);

  bool waiting_for_stop() const { return waiting_for_stop_; }
  bool ended() const { return cx_.state.end_session; }

 private:
  void on_packet(std::string_view payload);
  void send_packet(const std::string& payload);
  void report_stop(const tracer::StopEvent& event);
  void notify_stop(const tracer::StopEvent& event);

  Context& cx_;
  Writer write_;
  protocol::FrameDecoder decoder_;
  std::vector<protocol::FrameEvent> events_;
  std::string last_sent_;        // for retransmission on '-'
  bool waiting_for_stop_ = false;
  bool interrupt_pending_ = false;  // a 0x03 that came while nothing ran
};

}  // namespace server
