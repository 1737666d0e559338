// libhindsight-recorder.so's entry points: what the server calls in the program it brought the
// recorder into (with an inferior call, tracer/linux/inferior_call.hpp). C names, exported by
// recorder.map and nothing else.
#include "tracer/inprocess/recorder/recorder_api.h"

#include "tracer/inprocess/recorder/recorder.hpp"

namespace {

recorder::ThreadState* block_at(uint64_t block) {
  return reinterpret_cast<recorder::ThreadState*>(block);
}

}  // namespace

extern "C" unsigned hs_recorder_abi_version(void) {
  return HS_RECORDER_ABI_VERSION;
}
extern "C" int hs_recorder_init(void) {
  return recorder::init() ? 0 : -1;
}
extern "C" uint64_t hs_recorder_new_thread(void) {
  return reinterpret_cast<uint64_t>(recorder::new_thread_block());
}
extern "C" uint64_t hs_recorder_thread_entry(void) {
  return recorder::thread_entry();
}
extern "C" uint64_t hs_recorder_resume_slot(uint64_t block) {
  return reinterpret_cast<uint64_t>(&block_at(block)->resume);
}
extern "C" uint64_t hs_recorder_exit_slot(uint64_t block) {
  return reinterpret_cast<uint64_t>(&block_at(block)->exited_at);
}
extern "C" uint64_t hs_recorder_private_stack_top(uint64_t block) {
  return block_at(block)->private_stack_top;
}
extern "C" uint64_t hs_recorder_leave_slots(uint64_t block) {
  return reinterpret_cast<uint64_t>(&block_at(block)->target);
}
extern "C" uint64_t hs_recorder_translator_slot(void) {
  return recorder::translator_slot();
}
extern "C" uint64_t hs_recorder_stubs(void) {
  return recorder::stubs();
}
extern "C" uint64_t hs_recorder_ring_of(uint64_t block) {
  return reinterpret_cast<uint64_t>(&block_at(block)->ring);
}
extern "C" uint64_t hs_recorder_app_address(uint64_t pc, uint64_t sp) {
  return recorder::app_address(pc, sp);
}
extern "C" void hs_recorder_flush(void) {
  recorder::flush();
}
extern "C" void hs_recorder_shutdown(void) {
  recorder::shutdown();
}
