// The recording thread's own block, reached from translated code through %gs: the scratch
// slots the branch sequences save registers in, the ring's head, the lookup table and the
// dispatcher's address. Each recording thread's %gs base points at its block (x86-64 Linux
// programs leave %gs alone: their TLS is %fs), so a %gs-relative operand reaches the thread's
// own block from code in any cache region, and from a library loaded with dlopen, whose TLS is
// not at a fixed distance from %fs. The block is mapped with mmap, never from the program's heap.
#pragma once

#include <cstddef>
#include <cstdint>

#include "tracer/inprocess/recorder/recorder_api.h"
#include "tracer/inprocess/recorder/recorder_ring.h"

namespace recorder {

struct LookupEntry;

struct ThreadState {
  ThreadState* self = nullptr;  // first: %gs:0 is the block's own address
  std::uint64_t save_rax = 0;
  std::uint64_t save_rcx = 0;
  std::uint64_t save_rdx = 0;
  std::uint64_t save_r10 = 0;  // the registers the branch sequences work in (branch_sequences.cpp)
  std::uint64_t save_r11 = 0;
  std::uint64_t save_rsp = 0;  // the program's, while the dispatcher runs on its own stack
  // The dispatcher's way on (recorder_api.h, leave_slots): the cache address its
  // `jmp gs:[target]` goes to, the program address that stands for, and the server's request
  // to leave (then target is the leave trap).
  std::uint64_t target = 0;
  std::uint64_t target_app = 0;
  std::uint64_t leave_request = 0;
  std::uint64_t resume = 0;    // where the thread entry takes the thread (the server sets it)
  hs_recorder_ring ring{};
  LookupEntry* lookup = nullptr;
  std::uint64_t dispatch = 0;           // the dispatcher's entry (code_cache.cpp emits it)
  std::uint64_t exit_dispatch = 0;      // its entry from a direct exit's stub (branch_sequences.hpp)
  std::uint64_t private_stack_top = 0;  // 16-byte aligned
  std::uint8_t* xsave_area = nullptr;   // 64-byte aligned
  std::uint64_t exited_at = 0;          // the program address it last left the cache for
  std::uint64_t maps_gate = 0;          // the maps gate's entry (recorder.cpp emits it)
  std::uint64_t code_gate = 0;          // the code gate's entry (code_check.hpp; recorder.cpp emits it)
  std::uint64_t server_gone = 0;        // the way out for good once the server died (recorder.cpp)
  std::uint64_t computed_miss = 0;      // a computed exit's miss routine (branch_sequences.hpp)
  std::uint64_t computed_gone = 0;      // and its way to server_gone
  // The server's lifeline (recorder_api.h, lifeline_slot): a link of the server's robust futex
  // list (its own pointer, never read here), then the word the kernel marks when the server dies.
  std::uint64_t lifeline_link = 0;
  std::uint32_t lifeline = 0;
  std::uint32_t lifeline_pad = 0;
  std::uint64_t syscall_args[6] = {};   // rdi, rsi, rdx, r10, r8, r9 of a call at the maps gate
  std::uint64_t app_gs = 0;  // the program's own %gs base (recorder_api.h, app_gs_slot)
  std::uint64_t gs_save[2] = {};  // the registers a %gs operand of the program's borrows (program_gs.hpp)
  std::uint64_t rseq_cs_kept = 0;  // the program's rseq_cs word while in an rseq section's copy (rseq_sections.hpp)
  hs_recorder_thread_info info{};       // what the server reads of the block (recorder_api.h)
};
static_assert(offsetof(ThreadState, target_app) - offsetof(ThreadState, target) == HS_RECORDER_LEAVE_TARGET_APP);
// A block's ring samples follow it, at this distance from its start (one piece of memory,
// recorder.cpp): translated code stores a sample at gs:[kSamplesOffset + slot * 16].
inline constexpr std::size_t kSamplesOffset = (sizeof(ThreadState) + 4095) & ~std::size_t{4095};
static_assert(kSamplesOffset + 8 <= INT32_MAX);
static_assert(offsetof(ThreadState, leave_request) - offsetof(ThreadState, target) == HS_RECORDER_LEAVE_REQUEST);
static_assert(offsetof(ThreadState, lifeline) - offsetof(ThreadState, lifeline_link) == HS_RECORDER_LIFELINE_WORD);
static_assert(offsetof(ThreadState, lifeline) + 4 <= 4096);  // (in the block's first page: the server maps it)

// Field addresses of this object stand for their offsets in every thread's block: the
// sequences name a slot as &slots().save_rax.
const ThreadState& slots();
// The %gs-relative displacement of one byte of slots().
std::int32_t gs_offset(const void* field);

// The calling thread's block (its %gs base), nullptr when it has none.
ThreadState* current_thread_state();
// The calling thread's block when it is known to have one (%gs:0, no syscall).
inline ThreadState* this_thread_block() {
  ThreadState* self = nullptr;
  asm volatile("mov %%gs:0, %0" : "=r"(self));
  return self;
}
// Gives the calling thread `state` as its block (arch_prctl ARCH_SET_GS). False if refused.
bool set_thread_state(ThreadState* state);

}  // namespace recorder
