/* SPDX-License-Identifier: MIT */
/* What the server calls in libhindsight-recorder.so once it has loaded it into the program
 * (inferior calls on a stopped thread). The server and the library must agree on the version:
 * a server finding another refuses to record with it. Addresses are the program's. */
#ifndef HINDSIGHT_RECORDER_API_H
#define HINDSIGHT_RECORDER_API_H

#include <stdint.h>

#define HS_RECORDER_ABI_VERSION 6u
#define HS_RECORDER_LIBRARY "libhindsight-recorder.so"

#ifdef __cplusplus
extern "C" {
#endif

unsigned hs_recorder_abi_version(void);
/* The shared parts: code cache, tables, dispatcher. 0, or -1 when memory could not be mapped. */
int hs_recorder_init(void);
/* A new thread block (for a thread's %gs base), 0 if none. */
uint64_t hs_recorder_new_thread(void);
/* Where a thread enters the cache: its %gs at its block, the block's resume slot set. */
uint64_t hs_recorder_thread_entry(void);
/* The address of a block's resume slot (the program address the thread entry goes to). */
uint64_t hs_recorder_resume_slot(uint64_t block);
/* The address of a block's exited_at: the program address the thread last left the cache for. */
uint64_t hs_recorder_exit_slot(uint64_t block);
/* The top of a block's private stack (HS_RECORDER_PRIVATE_STACK_BYTES below it), on which the
 * dispatcher translates; and the first byte of the leave trap, dispatcher and thread entry
 * (HS_RECORDER_STUB_BYTES). A thread stopped on either is in the dispatcher. */
#define HS_RECORDER_PRIVATE_STACK_BYTES (256u << 10)
#define HS_RECORDER_STUB_BYTES 4096u
uint64_t hs_recorder_private_stack_top(uint64_t block);
uint64_t hs_recorder_stubs(void);
/* A thread in the dispatcher leaves without a step: the address of three words of its block,
 * the cache address the dispatcher goes to next, the program address that stands for, and a
 * request to leave. With the request set (and the first word set to the leave trap, in case the
 * dispatcher chose already), the dispatcher goes to the leave trap instead: an int3, the stubs'
 * first byte, where the thread stands with the program's registers, bound for the second word. */
#define HS_RECORDER_LEAVE_TRAP_OFFSET 0u
uint64_t hs_recorder_leave_slots(uint64_t block);
/* The address of two words: the block of the thread translating now (0: none); then nonzero
 * when a thread left for native code at a system call that unmapped or reprotected translated
 * code while other threads could run it (flush before the next entry; a flush clears it). */
uint64_t hs_recorder_translator_slot(void);
/* After each system call the cache runs in place comes `jmp .+10` (these two bytes) and the
 * program address after the call (8 bytes): a thread stopped inside the call (a ptrace event,
 * where no call into the program may run) can be moved back to the program from there. */
#define HS_RECORDER_AFTER_SYSCALL "\xeb\x08"
#define HS_RECORDER_AFTER_SYSCALL_BYTES 10u
/* The address of a block's ring (recorder_ring.h). */
uint64_t hs_recorder_ring_of(uint64_t block);
/* For a thread stopped at pc with its stack at sp (called on that thread): pc outside the
 * recorder's code, the program address at a safe point, 0 where it must step on first. */
uint64_t hs_recorder_app_address(uint64_t pc, uint64_t sp);
/* Forgets every translation (the program's code changed); no thread may be in the cache. */
void hs_recorder_flush(void);
/* Unmaps everything; no thread may be in the cache. */
void hs_recorder_shutdown(void);

#ifdef __cplusplus
}
#endif

#endif
