// The agent's printf (what `dprintf` sends with `set dprintf-style agent`): C's printf
// formatting of 64-bit values off the expression's stack, done by the server, so the program
// never stops for GDB. Strict like the rest of the agent: only the integer, character, pointer
// and string conversions (no %n, no floating point, no `*` widths), as many values as the
// format asks for, strings read through the Machine and bounded.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "base/result.hpp"
#include "tracer/agent/bytecode.hpp"

namespace tracer::agent {

inline constexpr std::size_t kMaxPrintedString = 4096;  // bytes one %s reads, at most

// format (its escapes, \n \t \" \\ ..., as GDB's printf takes them) with args in order, each
// narrowed as its conversion's length says (%d an int, %ld a long, %hhx an unsigned char...);
// %s reads the NUL-terminated string at its value ("(null)" for 0). Errc::invalid for a
// conversion or escape this does not do, a count of values that is not the format's, or a
// string it cannot read.
base::Result<std::string> format_printf(std::string_view format, std::span<const std::uint64_t> args,
                                        Machine& machine);

}  // namespace tracer::agent
