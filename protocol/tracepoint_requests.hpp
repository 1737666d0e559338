// The tracepoint packets GDB sends to define and run a trace experiment, and to look at its
// frames afterwards (the remote protocol's "Tracepoint Packets"): text in, structs out. Each
// parser takes the body after its packet's name and colon ("QTDP:" ...).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "protocol/hex.hpp"

namespace protocol {

// One action of a tracepoint: what a hit collects.
struct TraceAction {
  enum class Kind {
    Registers,   // "R MASK": the registers (GDB asks for every one it knows)
    Memory,      // "M BASEREG,OFFSET,LEN": LEN bytes at OFFSET, plus register BASEREG unless -1
    Expression,  // "X LEN,BYTECODE": what an agent expression reads (collect EXPR, teval)
  };
  Kind kind = Kind::Registers;
  std::string register_mask{};    // Registers: the hex mask, as sent
  std::int64_t base_register = -1;  // Memory: -1: the offset is an address
  std::uint64_t offset = 0;       // Memory
  std::uint64_t length = 0;       // Memory
  Bytes bytecode{};               // Expression
  bool operator==(const TraceAction&) const = default;
};

// QTDP:N:ADDR:E|D:STEP:PASS[:FLEN][:S][:XLEN,COND][-] — a new tracepoint. more: its actions
// follow in QTDP:-N:ADDR packets.
struct TracepointCreate {
  std::uint32_t number = 0;
  std::uint64_t address = 0;
  bool enabled = true;
  std::uint64_t step_count = 0;  // while-stepping: steps collected after each hit
  std::uint64_t pass_count = 0;  // hits after which the trace stops (0: no limit)
  std::optional<std::uint32_t> fast_length{};  // ftrace: bytes the jump pad moves aside
  bool static_marker = false;                  // strace: at a static marker
  std::optional<Bytes> condition{};            // agent expression; a hit collects when true
  bool more = false;
};

// QTDP:-N:ADDR:[S]ACTION...[-] — actions of tracepoint N; `S`: those of each while-stepping
// step (the first packet that has it, and all after it).
struct TracepointActions {
  std::uint32_t number = 0;
  std::uint64_t address = 0;
  bool while_stepping = false;
  std::vector<TraceAction> actions{};
  bool more = false;
};

using TracepointPacket = std::variant<TracepointCreate, TracepointActions>;
Result<TracepointPacket> parse_qtdp(std::string_view body);
// An action as GDB writes it in QTDP (what qTsP gives back).
std::string encode_trace_action(const TraceAction& action);

// QTDPsrc:N:ADDR:TYPE:START:SLEN:HEX — a piece of a tracepoint's source text, for a GDB that
// reconnects: TYPE "at" (the location), "cond" (its condition), "cmd" (one action line);
// START: where this piece goes in the text, SLEN: the whole text's length.
struct TracepointSource {
  std::uint32_t number = 0;
  std::uint64_t address = 0;
  std::string type;
  std::uint64_t start = 0;
  std::uint64_t total_length = 0;
  std::string text;
};
Result<TracepointSource> parse_qtdpsrc(std::string_view body);

// QTDV:N:VALUE:BUILTIN:HEXNAME — a trace state variable and its initial value.
struct TraceVariableDefinition {
  std::uint32_t number = 0;
  std::int64_t initial_value = 0;
  bool builtin = false;
  std::string name;
};
Result<TraceVariableDefinition> parse_qtdv(std::string_view body);

// QTEnable:N:ADDR, QTDisable:N:ADDR, qTP:N:ADDR.
struct TracepointLocation {
  std::uint32_t number = 0;
  std::uint64_t address = 0;
};
Result<TracepointLocation> parse_tracepoint_location(std::string_view body);

// qTV:N — a trace state variable's number.
Result<std::uint32_t> parse_qtv(std::string_view body);

// QTFrame:N | pc:ADDR | tdp:T | range:START:END | outside:START:END — which trace frame to
// look at: frame N (-1, sent as ffffffff: none, back to the live program), or the next one
// after the current whose pc is ADDR, that tracepoint T made, whose pc is inside [START, END]
// or outside it.
struct FrameSelection {
  enum class Kind { Number, Pc, Tracepoint, InRange, OutsideRange };
  Kind kind = Kind::Number;
  std::int64_t number = -1;  // Number (-1: none), Tracepoint
  std::uint64_t start = 0;   // Pc: the pc; InRange, OutsideRange: the range's bounds
  std::uint64_t end = 0;
};
Result<FrameSelection> parse_qtframe(std::string_view body);

// QTro:START,END[:START,END]... — the read-only sections: memory there may be read from the
// program's file when a frame did not collect it.
Result<std::vector<std::pair<std::uint64_t, std::uint64_t>>> parse_qtro(std::string_view body);

// QTBuffer:size:N (-1: the target's default) and QTBuffer:circular:0|1 (body after "QTBuffer:").
struct TraceBufferSetting {
  std::optional<std::int64_t> size{};  // set: the size; -1: the default
  std::optional<bool> circular{};      // set: whether the buffer wraps
};
Result<TraceBufferSetting> parse_qtbuffer(std::string_view body);

// QTNotes:[user:HEX;][notes:HEX;][tstop:HEX;] — who runs the experiment, notes on it, and
// why it was stopped; a field sent empty clears it.
struct TraceNotes {
  std::optional<std::string> user{};
  std::optional<std::string> notes{};
  std::optional<std::string> stop_note{};
};
Result<TraceNotes> parse_qtnotes(std::string_view body);

}  // namespace protocol
