// The in-process branch recorder (prototype, one thread): runs a function of the program in a
// code cache inside the process and records every taken branch it makes (from, to) into the
// thread's ring (recorder_ring.h), with no stop per branch. Not yet wired into the server.
#pragma once

#include <cstddef>
#include <cstdint>

#include "tracer/inprocess/recorder/block_translator.hpp"
#include "tracer/inprocess/recorder/recorder_api.h"
#include "tracer/inprocess/recorder/recorder_ring.h"
#include "tracer/inprocess/recorder/thread_state.hpp"

namespace recorder {

using RecordedFn = std::uint64_t (*)(void*);
// Why the recorder could not start, in a few words; nullptr when it did. (No base::Result: the
// recorder loaded into a program has no heap to put a std::string on.)
using Failure = const char*;

// The recorder's shared parts (cache, tables, dispatcher, thread entry); once per process.
Failure init();
// A new thread's block (thread_state.hpp: its ring, private stack, XSAVE area), for the thread
// whose %gs base will point at it: one the server retired (its thread gone) made anew, else a
// new one; nullptr when none could be mapped. After init().
// samples: what its ring should hold at least (recorder_api.h's new_thread).
ThreadState* new_thread_block(std::uint64_t samples);
// Where a thread whose block's `resume` is set and whose %gs points at its block enters the
// cache (the server sets its rip there).
std::uint64_t thread_entry();
// Where the block of the thread translating now is (8 bytes; 0: none), then the word that says
// the cache went stale under running threads (recorder_api.h).
std::uint64_t translator_slot();
// The first byte of the leave trap, dispatcher and thread entry (recorder_api.h's HS_RECORDER_STUB_BYTES).
std::uint64_t stubs();
// What the server reads to tell where a stopped thread stands (recorder_api.h): the safe
// points and the cache's regions.
void describe_cache(hs_recorder_process_info& info);
// Forgets every translation (the program's code changed: a breakpoint, a write). No thread
// may be in the cache.
void flush();
// Unmaps everything init() and new_thread_block() mapped. No thread may be in the cache.
void shutdown();
// In a fork child, on its one thread: the translation lock released (a copy of one a thread of
// the parent may have held) and every translation forgotten (the copy may be half made).
void settle_fork_child();

// Sets the calling thread up to record (init, and a block of its own); once per thread.
Failure start_thread();
// fn(arg) run in the cache on this thread (start_thread first); its result. Control that leaves
// the cache (see block_translator.hpp) runs on natively to fn's return.
std::uint64_t run(RecordedFn fn, void* arg);
// This thread's ring; clear_ring() empties it (head = 0).
const hs_recorder_ring& ring();
void clear_ring();
// What the server tells of rseq (recorder_api.h, rseq_config): the distance of each thread's
// rseq_cs word from its %fs base, and the signature its threads registered. After init().
void set_rseq(std::int64_t cs_offset, std::uint32_t signature);
// With recording off, blocks translated afterwards store no samples (the translation's own cost).
// Blocks already translated keep what they were made with.
void set_recording(bool on);
TranslatorStats stats();
std::size_t cache_bytes();
// The address the outermost return lands on (the recorder's way home, native code).
std::uint64_t exit_point();

}  // namespace recorder
