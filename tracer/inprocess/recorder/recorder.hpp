// The in-process branch recorder (prototype, one thread): runs a function of the program in a
// code cache inside the process and records every taken branch it makes (from, to) into the
// thread's ring (recorder_ring.h), with no stop per branch. Not yet wired into the server.
#pragma once

#include <cstddef>
#include <cstdint>

#include "base/result.hpp"
#include "tracer/inprocess/recorder/block_translator.hpp"
#include "tracer/inprocess/recorder/recorder_ring.h"

namespace recorder {

using RecordedFn = std::uint64_t (*)(void*);

// Sets the calling thread up to record (ring, tables, cache, dispatcher); once per thread.
base::Result<void> start_thread();
// fn(arg) run in the cache on this thread (start_thread first); its result. Control that leaves
// the cache (see block_translator.hpp) runs on natively to fn's return.
std::uint64_t run(RecordedFn fn, void* arg);
// This thread's ring; clear_ring() empties it (head = 0).
const hs_recorder_ring& ring();
void clear_ring();
// With recording off, blocks translated afterwards store no samples (the translation's own cost).
// Blocks already translated keep what they were made with.
void set_recording(bool on);
TranslatorStats stats();
std::size_t cache_bytes();
// The address the outermost return lands on (the recorder's way home, native code).
std::uint64_t exit_point();

}  // namespace recorder
