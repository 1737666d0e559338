// A stopped thread's call stack, unwound by libunwind with our own accessors: memory and
// registers come through the Target (so it works alike under ptrace and under the dbt
// recorder), unwind tables are the modules' .eh_frame_hdr found by the Symbolizer.
#pragma once

#include <vector>

#include "tracer/symbols/memory_cache.hpp"
#include "tracer/symbols/symbolizer.hpp"

namespace tracer {

struct StackFrame {
  Addr pc = 0;
  bool return_address = false;  // a caller's frame: pc is the instruction after its call
  bool signal_frame = false;    // the kernel's signal frame (the handler returns through it)
};

// The thread's frames, innermost first, from its registers in the `g` packet layout.
std::vector<StackFrame> unwind_stack(MemoryCache& memory, Symbolizer& symbols, const Bytes& g_registers,
                                     std::size_t max_frames = 64);

}  // namespace tracer
