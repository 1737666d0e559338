// What Valgrind's gdbserver answers, read: its stop replies and its target description (the
// register sizes behind its `g` packet). Pure, so that odd answers are tested and fuzzed.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "arch/x86/isa.hpp"
#include "base/result.hpp"
#include "tracer/types.hpp"

namespace tracer::valgrind {

// A stop reply (T/S/W/X, read by protocol/'s parse_stop_reply); the event is for pid, and for thread `current` unless the reply names
// one (then `thread` holds it). A reply that is none of these is a SIGTRAP stop. A field that
// does not parse is left out, never guessed.
struct StubStop {
  StopEvent event;
  std::optional<Tid> thread;  // "thread:..." in the reply
  Addr pc = 0;                // the program counter when the reply expedites it, else 0
};
// isa: the program's, which numbers the expedited registers.
StubStop parse_stop_reply(std::string_view reply, Pid pid, Tid current, arch::x86::Isa isa);

// The instruction set a top-level target description is for: i386 when its <architecture>
// says so, else amd64.
arch::x86::Isa description_isa(std::string_view document);

// Bytes per register in `g` order: the <reg bitsize=...> of every feature the top-level
// description includes, in order. fetch(annex) reads one document. A size that is not a
// whole, sane number of bytes is an error.
using DocumentReader = std::function<base::Result<std::string>(const std::string& annex)>;
base::Result<std::vector<std::size_t>> register_sizes(const DocumentReader& fetch);

}  // namespace tracer::valgrind
