#include "tracer/inprocess/recorder/thread_state.hpp"

#include <asm/prctl.h>

#include "tracer/inprocess/recorder/sys.hpp"

namespace recorder {

const ThreadState& slots() {
  static const ThreadState layout;
  return layout;
}

std::int32_t gs_offset(const void* field) {
  return static_cast<std::int32_t>(static_cast<const std::uint8_t*>(field) -
                                   reinterpret_cast<const std::uint8_t*>(&slots()));
}

ThreadState* current_thread_state() {
  unsigned long base = 0;
  if (sys::arch_prctl(ARCH_GET_GS, reinterpret_cast<std::uint64_t>(&base)) != 0 || base == 0) {
    return nullptr;
  }
  return reinterpret_cast<ThreadState*>(base);
}

bool set_thread_state(ThreadState* state) {
  state->self = state;
  return sys::arch_prctl(ARCH_SET_GS, reinterpret_cast<std::uint64_t>(state)) == 0;
}

}  // namespace recorder
