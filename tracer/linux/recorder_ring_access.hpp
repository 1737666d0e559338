// A thread's ring in the program (recorder_ring.h) as the server reads it, and the two writes it
// makes there (a branch the cache's sigreturn sequence recorded, taken back and written again; a
// gap): the one ring reader.
#pragma once

#include <cstdint>
#include <vector>

#include "base/result.hpp"
#include "tracer/btrace/branch_tracer.hpp"
#include "tracer/inprocess/recorder/recorder_ring.h"
#include "tracer/linux/recorder_memory.hpp"
#include "tracer/types.hpp"

namespace tracer {

// The ring's header at `ring`, checked (its capacity a power of two within recorder_ring.h's bounds).
base::Result<hs_recorder_ring> ring_header(RecorderMemory& memory, Addr ring);
// Its samples from the `skip`-th of those written on (at most a ring's worth), oldest first, read
// straight into the server's form (a ring holds up to 16 MiB of them);
// `head`: how many were ever written, `lost`: how many of those after `skip` were overwritten unread.
base::Result<std::vector<BranchSample>> ring_samples(RecorderMemory& memory, Addr ring, std::uint64_t skip,
                                                           std::uint64_t* head, std::uint64_t* lost);
// `sample` written as the ring's newest.
base::Result<void> ring_append(RecorderMemory& memory, Addr ring, const hs_recorder_sample& sample);
// The newest sample taken back when it is `sample` and not among the first `taken` (read already).
base::Result<void> ring_drop_last(RecorderMemory& memory, Addr ring, std::uint64_t taken,
                                  const hs_recorder_sample& sample);

}  // namespace tracer
