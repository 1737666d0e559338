// libhindsight-recorder.so's entry points: what the server calls in the program it mapped the
// recorder into (tracer/linux/remote_syscalls.hpp's call) and the tables it reads there. C names,
// exported by recorder.map and nothing else.
#include "tracer/inprocess/recorder/recorder_api.h"

#include "tracer/inprocess/recorder/recorder.hpp"

asm(R"(
  .text
  .globl hs_recorder_return_gadget
  .type hs_recorder_return_gadget, @function
hs_recorder_return_gadget:
  syscall
  ud2
  .size hs_recorder_return_gadget, .-hs_recorder_return_gadget
)");

namespace {

hs_recorder_process_info g_process_info{};

uint64_t new_thread(uint64_t samples) {
  recorder::ThreadState* t = recorder::new_thread_block(samples);
  return t != nullptr ? reinterpret_cast<uint64_t>(&t->info) : 0;
}

void flush() {
  recorder::flush();
}

void shutdown() {
  recorder::shutdown();
}

void settle_fork_child() {
  recorder::settle_fork_child();
}

template <class Fn>
uint64_t address_of(Fn* fn) {
  return reinterpret_cast<uint64_t>(fn);
}

}  // namespace

#define HS_EXPORTED extern "C" __attribute__((visibility("default")))

HS_EXPORTED unsigned hs_recorder_abi_version(void) {
  return HS_RECORDER_ABI_VERSION;
}

HS_EXPORTED uint64_t hs_recorder_setup(void) {
  hs_recorder_process_info& info = g_process_info;
  info = hs_recorder_process_info{};
  info.abi_version = HS_RECORDER_ABI_VERSION;
  if (recorder::init() == nullptr) {
    info.ready = 1;
    info.thread_entry = recorder::thread_entry();
    info.stubs = recorder::stubs();
    info.translator_slot = recorder::translator_slot();
    info.new_thread = address_of(new_thread);
    recorder::describe_cache(info);
    info.flush = address_of(flush);
    info.shutdown = address_of(shutdown);
    info.settle_fork_child = address_of(settle_fork_child);
  }
  return reinterpret_cast<uint64_t>(&info);
}
