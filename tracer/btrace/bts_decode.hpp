// Decoding a copy of a perf_event BTS ring (btrace.md §9.3-9.4). Pure: the bytes, data_head
// and the position of the previous read in, samples out; tested on hand-laid rings.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "base/result.hpp"
#include "tracer/btrace/branch_tracer.hpp"
#include "tracer/types.hpp"

namespace tracer {

// The kernel's layout (linux/perf_event.h), repeated here so this header needs no <linux/*>.
inline constexpr std::uint32_t kPerfRecordLost = 2;
inline constexpr std::uint32_t kPerfRecordSample = 9;
inline constexpr std::uint32_t kPerfRecordMaxKnown = 20;  // PERF_RECORD_AUX_OUTPUT_HW_ID
inline constexpr std::uint64_t kPerfHeaderBytes = 8;      // u32 type, u16 misc, u16 size

struct BtsDecoded {
  std::vector<BranchSample> samples;  // oldest first; kernel `from` samples removed
  // Not everything written after `since` is here: it was overwritten, or the walk stopped
  // at a PERF_RECORD_LOST / undecodable bytes before reaching it. A delta must not be built.
  bool lost = false;
  bool incomplete = false;         // the walk stopped at a LOST record or undecodable bytes
  std::uint64_t kernel = 0;        // samples dropped for a kernel `from`
  std::uint64_t lost_records = 0;  // the count carried by the LOST record that stopped the walk
  std::uint64_t skipped = 0;       // other (non-sample) records stepped over
};

// Walks backwards from data_head over the records of `data` (the whole data area, a power of
// two >= 8 bytes; byte n of the stream lives at data[n % size]) down to position `since`, or
// to the oldest byte not yet overwritten (data_head - size), whichever is newer. Records may
// straddle the end of the area. PERF_RECORD_SAMPLE (24 bytes: header, ip, addr) becomes a
// sample; other record types are stepped over, except PERF_RECORD_LOST, where the walk stops:
// the samples before it are not connected to the ones after it.
BtsDecoded decode_bts(std::span<const std::uint8_t> data, std::uint64_t data_head, std::uint64_t since);

// A copy of the data area and the data_head it belongs to.
struct PerfSnapshot {
  std::vector<std::uint8_t> data;
  std::uint64_t head = 0;
  // Bytes of the stream before this position may have been overwritten while they were
  // copied (the head kept moving through every retry); 0 when the copy is consistent.
  std::uint64_t stable_from = 0;
};

// One qXfer:btrace:read over a snapshot of the ring (btrace.md §6, §9.4): all / new / delta;
// a delta that lost data is Errc::overflow. last_head is data_head at the previous successful
// read; it moves to snap.head on success only.
base::Result<BtraceData> read_bts_snapshot(const PerfSnapshot& snap, BtraceRead kind, Addr current_pc,
                                           std::uint64_t& last_head);

// Data pages to map for a requested buffer size (btrace.md §9.3): bytes / page_size rounded
// up, at least 1, rounded up to a power of two.
std::uint64_t bts_data_pages(std::uint64_t requested_bytes, std::uint64_t page_size);
// Every collector's buffer as the kernel sizes a BTS buffer: a power-of-two number of this
// machine's pages (GDB's `buffer-size 1` shows 4kB, whichever collector records).
BtraceConfig as_kernel_sizes_it(BtraceConfig config);

}  // namespace tracer
