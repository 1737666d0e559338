#include "tracer/inprocess/recorder/thread_state.hpp"

namespace recorder {

thread_local ThreadState tls_state;

std::int32_t fs_offset(const void* field) {
  std::uint64_t thread_pointer = 0;
  asm("mov %%fs:0, %0" : "=r"(thread_pointer));  // the TCB's self pointer: the %fs base
  return static_cast<std::int32_t>(reinterpret_cast<std::uint64_t>(field) - thread_pointer);
}

}  // namespace recorder
