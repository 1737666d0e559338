// libdw's frame unwinder (dwfl_attach_state / dwfl_getthread_frames) over our memory and
// registers: the process is never touched here, only read through the Target.
#include "tracer/symbols/cfi_unwinder.hpp"

#include <elfutils/libdwfl.h>

#include <array>
#include <cstring>
#include <utility>

namespace tracer {
namespace {

constexpr int kI386Registers = 9;  // eax ecx edx ebx esp ebp esi edi eip
constexpr int kEip = 8;

struct CfiContext {
  MemoryCache* memory;
  Tid tid;
  std::array<Dwarf_Word, kI386Registers> regs{};
  std::size_t max_frames;
  std::vector<StackFrame> frames;  // at most max_frames: a corrupt stack that loops ends there
};

CfiContext& cfi_context(void* arg) { return *static_cast<CfiContext*>(arg); }

// One thread: the one asked for.
pid_t next_thread(Dwfl*, void* arg, void** thread_arg) {
  if (*thread_arg != nullptr) {
    return 0;
  }
  *thread_arg = arg;
  return cfi_context(arg).tid;
}

bool memory_read(Dwfl*, Dwarf_Addr addr, Dwarf_Word* result, void* arg) {
  std::uint32_t word = 0;  // a 32-bit program's word
  if (!cfi_context(arg).memory->read(addr, &word, sizeof word)) {
    return false;
  }
  *result = word;
  return true;
}

bool set_initial_registers(Dwfl_Thread* thread, void* arg) {
  const CfiContext& cx = cfi_context(arg);
  if (!dwfl_thread_state_registers(thread, 0, kI386Registers, cx.regs.data())) {
    return false;
  }
  dwfl_thread_state_register_pc(thread, cx.regs[kEip]);
  return true;
}

int on_frame(Dwfl_Frame* frame, void* arg) {
  CfiContext& cx = cfi_context(arg);
  Dwarf_Addr pc = 0;
  bool activation = false;  // false: pc is a return address, inside the caller's call + 1
  if (!dwfl_frame_pc(frame, &pc, &activation) || pc == 0) {
    return DWARF_CB_ABORT;
  }
  cx.frames.push_back(StackFrame{pc, !activation, false});
  return cx.frames.size() < cx.max_frames ? DWARF_CB_OK : DWARF_CB_ABORT;
}

const Dwfl_Thread_Callbacks kCallbacks = {
    .next_thread = next_thread,
    .get_thread = nullptr,
    .memory_read = memory_read,
    .set_initial_registers = set_initial_registers,
    .detach = nullptr,
    .thread_detach = nullptr,
};

}  // namespace

std::vector<StackFrame> unwind_stack_i386(MemoryCache& memory, Pid pid, Tid tid, const Bytes& g_registers,
                                          std::size_t max_frames) {
  CfiContext cx{&memory, tid, {}, max_frames, {}};
  if (g_registers.size() < kI386Registers * sizeof(std::uint32_t)) {
    return {};
  }
  for (int i = 0; i < kI386Registers; ++i) {
    std::uint32_t value = 0;
    std::memcpy(&value, g_registers.data() + i * sizeof value, sizeof value);
    cx.regs[static_cast<std::size_t>(i)] = value;
  }
  // A session of its own: libdw attaches thread state to a Dwfl once.
  auto modules = Symbolizer::for_process(pid);
  if (!modules) {
    return {};
  }
  Dwfl* dwfl = (*modules)->session();
  if (!dwfl_attach_state(dwfl, nullptr, pid, &kCallbacks, &cx)) {
    return {};
  }
  dwfl_getthread_frames(dwfl, tid, on_frame, &cx);  // what it unwound before an error stands
  return std::move(cx.frames);
}

}  // namespace tracer
