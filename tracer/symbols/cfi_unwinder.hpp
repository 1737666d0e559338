// A stopped 32-bit thread's call stack, unwound by libdw from its modules' CFI with libdw's
// i386 backend (Debian's libunwind unwinds x86-64 frames only). Memory comes through the
// MemoryCache (the Target), registers from `g`; the modules are the process's, read anew.
#pragma once

#include <vector>

#include "tracer/symbols/memory_cache.hpp"
#include "tracer/symbols/unwinder.hpp"

namespace tracer {

// The frames of thread tid of process pid, innermost first, from its registers in the i386
// `g` layout (eax ecx edx ebx esp ebp esi edi eip first: DWARF's i386 numbering too).
std::vector<StackFrame> unwind_stack_i386(MemoryCache& memory, Pid pid, Tid tid, const Bytes& g_registers,
                                          std::size_t max_frames = 64);

}  // namespace tracer
