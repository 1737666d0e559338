/* SPDX-License-Identifier: MIT */
/* What the server calls in libhindsight-recorder.so once its private loader has mapped it into
 * the program (tracer/linux/recorder_loader.hpp; calls on a stopped thread that return to
 * hs_recorder_return_gadget), and what it reads there. The server and the image must agree on the
 * version: a server finding another refuses to record with it. Addresses are the program's. Each
 * call costs a round of ptrace stops: the server makes one call to set the recorder up and one per
 * thread, and reads the rest from the program's memory. */
#ifndef HINDSIGHT_RECORDER_API_H
#define HINDSIGHT_RECORDER_API_H

#include <stdint.h>

#define HS_RECORDER_ABI_VERSION 17u
#define HS_RECORDER_LIBRARY "libhindsight-recorder.so"

#ifdef __cplusplus
extern "C" {
#endif

/* What hs_recorder_setup() gives the address of: the recorder's shared parts, once per process. */
struct hs_recorder_process_info {
  uint64_t abi_version; /* HS_RECORDER_ABI_VERSION: read first, the rest only if it matches */
  uint64_t ready;       /* 1: set up; 0: its memory could not be mapped (nothing else is valid) */
  /* Where a thread enters the cache: its %gs at its block, the block's resume slot set. */
  uint64_t thread_entry;
  /* The first byte of the leave trap, the dispatcher and the thread entry
   * (HS_RECORDER_STUB_BYTES): a thread stopped there, or on a block's private stack, is in the
   * dispatcher. */
  uint64_t stubs;
  /* Three words: the block of the thread translating now (0: none); then nonzero when a thread
   * left for native code at a system call that unmapped or reprotected translated code while
   * other threads could run it (flush before the next entry; a flush clears it); then the
   * server's: nonzero while the threads stop at system calls (catch syscall), when a call that
   * may change the mappings runs natively instead of in the recorder (its stop shows the
   * program's code). */
  uint64_t translator_slot;
  /* Functions, called on a stopped thread: */
  /* uint64_t (uint64_t samples): a new (or retired) block's hs_recorder_thread_info, its ring of
   * at least `samples` (a power of two within recorder_ring.h's bounds, the smallest without
   * BMI2); 0 if none */
  uint64_t new_thread;
  /* The cache's regions, read by the server with no call: cache_region_count (the address of a
   * word) of HS_RECORDER_MAX_CACHE_REGIONS hs_recorder_cache_region at cache_regions, each
   * HS_RECORDER_CACHE_REGION_BYTES of code from its base, with its safe points (below). */
  uint64_t cache_regions;
  uint64_t cache_region_count;
  uint64_t flush;    /* void (void): forgets every translation; no thread may be in the cache */
  uint64_t shutdown; /* void (void): unmaps everything; no thread may be in the cache */
  /* void (void), in a fork child before its first entry: its copy of the translation lock
   * released (a thread of the parent may have held it) and every translation forgotten (the
   * copy may be half made). */
  uint64_t settle_fork_child;
  /* rseq critical sections (rseq_sections.hpp): the address of two words the server writes before
   * any thread enters, the distance of each thread's rseq_cs word from its %fs base (int64; 0:
   * unknown, sections run as plain code) and the signature the threads registered. The cache runs
   * a section as a copy named by a descriptor of its own, in rseq_descriptors
   * (rseq_descriptor_bytes; 0: none): the server gives a thread it moves out of the cache whose
   * rseq_cs word points there the program's word back (its block's rseq_cs_kept_slot). */
  uint64_t rseq_config;
  uint64_t rseq_descriptors;
  uint64_t rseq_descriptor_bytes;
};

/* Where the program would be for a thread stopped at a cache address: the safe points of the
 * region the address is in, safe_point_count (read it first) hs_recorder_safe_point entries from
 * safe_points in ascending order of cache address, made one after the other as the region's code
 * is (a binary search finds pc; none: the thread must step on). Entries past the count may be
 * being written; one is never changed while its code can run (a flush empties the region). */
struct hs_recorder_safe_point {
  uint64_t cache;
  uint64_t app;
};
struct hs_recorder_cache_region {
  uint64_t base;
  uint64_t cursor;
  uint64_t safe_points;
  uint64_t safe_point_count;
};
#define HS_RECORDER_MAX_CACHE_REGIONS 64u
#define HS_RECORDER_CACHE_REGION_BYTES (16u << 20)

/* What a new thread block (hs_recorder_process_info.new_thread) gives the address of. */
struct hs_recorder_thread_info {
  uint64_t block;       /* the thread's %gs base while it records */
  uint64_t resume_slot; /* the program address the thread entry takes it to */
  uint64_t exit_slot;   /* the program address it last left the cache for */
  uint64_t ring;        /* its ring (recorder_ring.h) */
  /* The top of its private stack (HS_RECORDER_PRIVATE_STACK_BYTES below it), on which the
   * dispatcher translates. */
  uint64_t private_stack_top;
  /* A thread in the dispatcher leaves without a step: three words, the cache address the
   * dispatcher goes to next, the program address that stands for, and a request to leave. With
   * the request set (and the first word set to the leave trap, in case the dispatcher chose
   * already), the dispatcher goes to the leave trap instead: an int3, the stubs' first byte,
   * where the thread stands with the program's registers, bound for the second word. */
  uint64_t leave_slots;
  /* The block and the ring lie in one piece of shared_bytes from `block`, mapped from a memfd
   * whose descriptor is shared_fd (-1: private memory, the memfd was refused): the server maps
   * it too, from /proc/PID/fd/N, and reads the ring with no stop, and after the process is gone.
   * The descriptor is the program's only until the thread first runs in the cache: the
   * dispatcher closes it then (the server has mapped it by then). */
  int64_t shared_fd;
  uint64_t shared_bytes;
  /* The server sets it to 1 once the thread is gone (it has taken its ring): new_thread makes the
   * block anew for the next thread, its memory (and the server's mapping of it) kept. A reused
   * block comes with shared_fd -1. */
  uint64_t retired;
  /* The program's own %gs base while the thread runs in the cache (its %gs is the block): the
   * server writes it at entry and gives it back at the leave; the cache's code reads and sets it
   * for the program's arch_prctl, rdgsbase, wrgsbase and %gs operands. */
  uint64_t app_gs_slot;
  /* The program's rseq_cs word while the thread runs an rseq section's copy. */
  uint64_t rseq_cs_kept_slot;
  /* The server's lifeline, in the block's first page: a word for the server's robust futex list
   * (a link of its own), then at HS_RECORDER_LIFELINE_WORD a 32-bit futex word that holds the tid
   * of a thread of the server's that does nothing else. When the server dies (SIGKILL, the OOM
   * killer) the kernel marks the word (HS_RECORDER_SERVER_DIED, the tid gone); the cache's code
   * meets that at the thread's next return or indirect branch and the thread leaves for native
   * code for good (the program's %gs base given back). 0: no lifeline. */
  uint64_t lifeline_slot;
};
#define HS_RECORDER_LIFELINE_WORD 8u
#define HS_RECORDER_SERVER_DIED 0x40000000u /* FUTEX_OWNER_DIED, the owner's tid cleared */

#define HS_RECORDER_PRIVATE_STACK_BYTES (256u << 10)
#define HS_RECORDER_STUB_BYTES 4096u
#define HS_RECORDER_LEAVE_TRAP_OFFSET 0u
/* The three words at leave_slots, by their offsets from it. */
#define HS_RECORDER_LEAVE_TARGET 0u
#define HS_RECORDER_LEAVE_TARGET_APP 8u
#define HS_RECORDER_LEAVE_REQUEST 16u

unsigned hs_recorder_abi_version(void);
/* A `syscall` instruction (then ud2): the return address of the server's calls. The call's end is
 * the thread's stop at this system call's entry (PTRACE_SYSCALL), its result in orig_rax there;
 * the server skips the call. No fault, no signal: nothing the program could see. */
extern char hs_recorder_return_gadget[];
/* Sets the shared parts up (code cache, tables, dispatcher) and returns the address of its
 * hs_recorder_process_info. */
uint64_t hs_recorder_setup(void);

/* Right after each system call the cache runs in place (its `syscall` instruction) comes
 * `jmp .+10` (these two bytes) and the program address after the call (8 bytes): a thread stopped inside the call (a ptrace event,
 * a syscall stop, where no call into the program may run) can be moved back to the program
 * from there. The sigreturn the cache makes of the program's (rt_sigreturn, which does not
 * return) has it too. */
#define HS_RECORDER_AFTER_SYSCALL "\xeb\x08"
#define HS_RECORDER_AFTER_SYSCALL_BYTES 10u

#ifdef __cplusplus
}
#endif

#endif
