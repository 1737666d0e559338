#include "tracer/inprocess/recorder/thread_state.hpp"

#include <asm/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

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
  if (::syscall(SYS_arch_prctl, ARCH_GET_GS, &base) != 0 || base == 0) {
    return nullptr;
  }
  return reinterpret_cast<ThreadState*>(base);
}

bool set_thread_state(ThreadState* state) {
  state->self = state;
  return ::syscall(SYS_arch_prctl, ARCH_SET_GS, reinterpret_cast<unsigned long>(state)) == 0;
}

}  // namespace recorder
