// A trace experiment, as GDB defines it: tracepoints with their conditions, actions and source
// text, trace state variables, the frame buffer, notes, and whether it runs and why it
// stopped. Its one owner is the Target that collects into it (hits happen in the tracer); the
// server defines it and reads it. A hit collects here: the tracepoint's condition, its
// actions into a frame, its pass count and a full buffer stopping the run. Pure: the stopped
// thread is an agent::Machine that can also give all its registers and read memory.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/result.hpp"
#include "tracer/agent/bytecode.hpp"
#include "tracer/trace/frames.hpp"

namespace tracer::trace {

// One thing a hit collects.
struct Action {
  enum class Kind {
    Registers,   // every register (GDB's mask names those it wants; all are kept, as gdbserver)
    Memory,      // length bytes at offset, plus register base_register's value unless it is -1
    Expression,  // what an agent expression's trace ops collect (collect EXPR, teval)
  };
  Kind kind = Kind::Registers;
  int base_register = -1;
  std::uint64_t offset = 0;
  std::uint64_t length = 0;
  Bytes bytecode{};
  std::string text{};  // as GDB wrote it, given back to a GDB that reconnects (qTsP)
};

struct Tracepoint {
  std::uint32_t number = 0;
  Addr address = 0;
  bool enabled = true;
  std::uint64_t step_count = 0;  // while-stepping: frames collected after each hit
  std::uint64_t pass_count = 0;  // hits after which the run stops (0: no limit)
  std::optional<std::uint32_t> fast_length{};  // defined with ftrace (collected as trace)
  std::optional<Bytes> condition{};
  std::vector<Action> actions{};
  std::vector<Action> step_actions{};
  struct Source {
    std::string type;  // "at", "cond", "cmd"
    std::string text;
  };
  std::vector<Source> sources{};
  // In the current (or last) run:
  std::uint64_t hits = 0;        // hits that collected (their condition held)
  std::uint64_t frame_bytes = 0;  // buffer bytes its frames took
};

struct Variable {
  std::uint32_t number = 0;
  std::string name;
  std::int64_t initial_value = 0;
  bool builtin = false;  // GDB's own ($trace_timestamp): the target gives its value
  std::int64_t value = 0;
};

// Why a run is not running (qTStatus's stop reason).
enum class StopReason { NotRun, Requested, PassCount, BufferFull, Disconnected, Error };

template <class T>
using Result = base::Result<T>;

// The stopped thread, for collection: an agent Machine that can also give every register.
class Thread : public agent::Machine {
 public:
  // The thread's registers as the `g` packet lays them out.
  virtual Result<Bytes> registers() = 0;
  // Up to len bytes at addr (fewer at the end of readable memory).
  virtual Result<Bytes> read_memory(Addr addr, std::size_t len) = 0;
};

// What a hit asks of the tracer.
struct HitOutcome {
  bool stop_run = false;  // the run ends now (pass count, full buffer, an error)
  // While-stepping: the thread steps this many times, each step collected by step().
  std::uint32_t stepping_tracepoint = 0;
  std::uint64_t steps = 0;
};

// A hit's actions in order, into machine's collect ops (a Memory action's block too);
// collect_registers for a Registers action. An error: an expression failed (the run must stop).
Result<void> run_actions(const std::vector<Action>& actions, agent::Machine& machine,
                         const std::function<void()>& collect_registers);

// The time runs and $trace_timestamp are stamped with: µs of a steady clock, as gdbserver's.
std::uint64_t timestamp_now();

class Experiment {
 public:
  // With the target's own variable, $trace_timestamp (number 1), as gdbserver has it.
  Experiment();

  // --- definition (QTinit, QTDP, QTDPsrc, QTDV, QTEnable/QTDisable) ---
  // Stops any run and forgets tracepoints, GDB's variables and frames (the buffer's settings
  // and the target's own variables stay).
  void clear();
  Result<void> define(Tracepoint tp);  // a tracepoint number and address already there: error
  // Appends actions to tp's (to its while-stepping ones with while_stepping), every
  // expression checked first: all or none.
  Result<void> add_actions(Tracepoint& tp, std::vector<Action> actions, bool while_stepping);
  Tracepoint* find(std::uint32_t number, Addr address);
  const std::vector<Tracepoint>& tracepoints() const { return tracepoints_; }
  void define_variable(Variable v);
  const std::map<std::uint32_t, Variable>& variables() const { return variables_; }
  // A variable's value for qTV: nullopt before any run (as gdbserver, "unknown").
  std::optional<std::int64_t> variable_value(std::uint32_t number) const;

  // --- the run (QTStart, QTStop, a hit) ---
  bool running() const { return running_; }
  // starts a run at `now` (µs): hit counts and frames start from zero, variables from their
  // initial values.
  void start(std::uint64_t now);
  void stop(StopReason reason, std::uint64_t now, std::uint32_t tracepoint = 0);
  // Stops the run for an error in tracepoint's collection (StopReason::Error).
  void fail(std::string why, std::uint64_t now, std::uint32_t tracepoint);
  // Addresses where an int3 must be while running: the enabled tracepoints'.
  std::vector<Addr> sites() const;
  // thread hit address: each enabled tracepoint there whose condition holds collects a
  // frame. When the run must stop (pass count reached, buffer full, an error), it is stopped
  // here and the caller takes the sites out.
  HitOutcome hit(Addr address, Thread& thread, std::uint64_t now);
  // A hit of tracepoint number at address that collected elsewhere (the in-process agent of
  // fast tracepoints, which checked its condition): its frame is kept as hit() keeps one, the
  // pass count and a full buffer stopping the run. False when the run is (now) stopped.
  bool add_hit(std::uint32_t number, Addr address, Frame frame, std::uint64_t now);
  // Step `step` (1-based) of tracepoint number's while-stepping, thread now at pc: collects
  // its step actions. True when the run stopped.
  bool step(std::uint32_t number, Addr address, std::uint64_t step, Addr pc, Thread& thread, std::uint64_t now);

  // --- status (qTStatus) ---
  StopReason stop_reason() const { return stop_reason_; }
  std::uint32_t stopping_tracepoint() const { return stopping_tracepoint_; }
  const std::string& error_text() const { return error_text_; }
  std::uint64_t start_time() const { return start_time_; }
  std::uint64_t stop_time() const { return stop_time_; }
  Buffer& buffer() { return buffer_; }
  const Buffer& buffer() const { return buffer_; }
  bool disconnected_tracing = false;  // QTDisconnected: a run outlives GDB's connection
  bool use_agent = true;  // QAgent: fast tracepoints may use the in-process agent (else: traps)
  std::string user, notes, stop_note;  // QTNotes

 private:
  // frame into the buffer, as tp's; false if the run must stop.
  bool keep(Tracepoint& tp, Frame frame, std::uint64_t now);
  // A frame of tp's actions at pc into the buffer; false if the run must stop.
  bool collect(Tracepoint& tp, const std::vector<Action>& actions, Addr pc, Thread& thread, std::uint64_t now);

  std::vector<Tracepoint> tracepoints_;
  std::map<std::uint32_t, Variable> variables_;
  Buffer buffer_;
  bool running_ = false;
  bool ever_ran_ = false;
  StopReason stop_reason_ = StopReason::NotRun;
  std::uint32_t stopping_tracepoint_ = 0;
  std::string error_text_;
  std::uint64_t start_time_ = 0;
  std::uint64_t stop_time_ = 0;
};

}  // namespace tracer::trace
