// GDB's agent expressions (the bytecode of target-side breakpoint conditions, `Z0,...;X`, of
// breakpoint commands, `;cmds:`, whose printf is an agent-style dprintf, and of tracepoints'
// conditions and collections): checked once when GDB sends one, then run at each hit against
// the stopped thread. Strict
// and bounded: a stack of at most kMaxStack values, at most kMaxSteps instructions a run (so
// a loop cannot hold the server), memory and registers read through a Machine that may fail;
// any fault ends the run with an error, never a guess. Pure: no ptrace, tested and fuzzed on
// its own.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "base/result.hpp"
#include "tracer/types.hpp"

namespace tracer::agent {

inline constexpr std::size_t kMaxStack = 256;
inline constexpr std::size_t kMaxSteps = 100000;
inline constexpr std::size_t kMaxLength = 4096;  // bytes of one expression

// What an expression may look at.
class Machine {
 public:
  virtual ~Machine() = default;
  // Register regno in GDB's numbering, zero-extended to 64 bits.
  virtual base::Result<std::uint64_t> reg(int regno) = 0;
  // len (1, 2, 4 or 8) bytes at addr, little-endian, zero-extended.
  virtual base::Result<std::uint64_t> read(Addr addr, std::size_t len) = 0;
  // What a printf formatted.
  virtual void print(std::string_view text) = 0;

  // A tracepoint's collection (trace, trace_quick, trace16, tracenz, tracev) and its trace
  // state variables (getv, setv). Default: no trace frame is being collected, and each is an
  // error.
  // Records len bytes at addr.
  virtual base::Result<void> collect(Addr addr, std::size_t len);
  // Records the bytes at addr up to the first NUL (included) or limit bytes.
  virtual base::Result<void> collect_string(Addr addr, std::size_t limit);
  virtual base::Result<std::int64_t> variable(std::uint32_t number);
  virtual base::Result<void> set_variable(std::uint32_t number, std::int64_t value);
  // Records variable number's value now.
  virtual base::Result<void> collect_variable(std::uint32_t number);
};

// The expression is well formed: not empty nor too long, every opcode one this engine runs
// (all of GDB's but floating point), every operand inside it (a printf's format
// ended by its NUL), every jump to the start of an instruction, and an `end` reachable. Errc::malformed says where it is not.
base::Result<void> validate(std::span<const std::uint8_t> code);

// What an expression touches besides memory: the highest register it reads (-1: none),
// whether it reads or sets trace state variables, whether it prints.
struct Usage {
  int highest_register = -1;
  bool state_variables = false;
  bool printf = false;
};
Usage usage(std::span<const std::uint8_t> code);

// Runs a validated expression to its `end`; the value on top of the stack then. Errors
// (Errc::invalid): stack overflow or underflow, division by zero, an unreadable register or
// address, the step budget spent, a printf whose format and values do not agree.
base::Result<std::uint64_t> evaluate(std::span<const std::uint8_t> code, Machine& machine);

// Runs a validated command (what `;cmds:` carries: a printf, then `end` on an empty stack) for
// what it prints; the errors of evaluate.
base::Result<void> execute(std::span<const std::uint8_t> code, Machine& machine);

}  // namespace tracer::agent
