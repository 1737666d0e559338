// What a server answers to the tracepoint packets (the remote protocol's "Tracepoint
// Packets"), in gdbserver's exact forms: the status of the experiment (qTStatus), the pieces
// of each tracepoint's definition and each state variable for a GDB that connects while a run
// goes on (qTfP/qTsP, qTfV/qTsV), a frame found (QTFrame), and a frame's contents
// (qXfer:traceframe-info). Structs in, text out.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "protocol/hex.hpp"

namespace protocol {

// qTStatus.
struct TraceStatusReply {
  bool running = false;
  // Why it is not running: "tnotrun", "tstop", "tpasscount", "tfull", "tdisconnected",
  // "terror"; tracepoint: the one that stopped it (pass count, error).
  std::string stop_reason = "tnotrun";
  std::uint32_t stopping_tracepoint = 0;
  std::string stop_text{};  // tstop: the user's note; terror: the error
  std::uint64_t frames = 0;
  std::uint64_t created = 0;
  std::uint64_t buffer_free = 0;
  std::uint64_t buffer_size = 0;
  bool circular = false;
  bool disconnected_tracing = false;
  std::uint64_t start_time = 0;  // µs
  std::uint64_t stop_time = 0;
  std::string user{};
  std::string notes{};
};
std::string encode_trace_status(const TraceStatusReply& status);

// The pieces of one tracepoint's definition, as qTfP / qTsP give them one at a time:
// "T" N:ADDR:E|D:STEP:PASS[:FLEN][:XLEN,COND], then "A" (or "S": while-stepping) N:ADDR:ACTION
// per action, then "Z" N:ADDR:TYPE:0:LEN:HEX per piece of source text.
struct TracepointDefinitionReply {
  std::uint32_t number = 0;
  std::uint64_t address = 0;
  bool enabled = true;
  std::uint64_t step_count = 0;
  std::uint64_t pass_count = 0;
  std::optional<std::uint32_t> fast_length{};
  std::optional<Bytes> condition{};
  std::vector<std::string> actions{};
  std::vector<std::string> step_actions{};
  std::vector<std::pair<std::string, std::string>> sources{};  // (type, text)
};
std::vector<std::string> encode_tracepoint_definition(const TracepointDefinitionReply& tp);

// qTfV / qTsV: N:VALUE:BUILTIN:HEXNAME.
std::string encode_trace_variable(std::uint32_t number, std::int64_t initial_value, bool builtin,
                                  const std::string& name);

// QTFrame: "F" FRAME "T" TRACEPOINT, or "F-1" when none matched.
std::string encode_frame_found(std::optional<std::pair<std::uint64_t, std::uint32_t>> frame);

// qXfer:traceframe-info: the memory ranges and state variables a frame holds.
std::string encode_traceframe_info(const std::vector<std::pair<std::uint64_t, std::uint64_t>>& memory,
                                   const std::vector<std::uint32_t>& variables);

}  // namespace protocol
