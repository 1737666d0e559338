// Per-thread branch-trace history, whatever collects it (Intel BTS through perf_event, or the
// software tracers). Everything is translated into one neutral sample before anyone reads it,
// and read back as GDB's BTS blocks. Pure interface: no <sys/*> here.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "base/result.hpp"
#include "tracer/types.hpp"

namespace tracer {

// One taken control transfer in user space: `from` is the branch instruction, `to` the next
// instruction executed.
// A gap is a sample whose `from` is kGapFrom: the collector lost the thread's path there (code
// it could not decode, an int3 of its own that vanished) and found the thread again at `to`.
// History never fills a gap with a made-up branch.
inline constexpr Addr kGapFrom = 0;

struct BranchSample {
  Addr from = 0;
  Addr to = 0;
  bool operator==(const BranchSample&) const = default;
  static BranchSample gap(Addr found_at) { return BranchSample{kGapFrom, found_at}; }
  bool is_gap() const { return from == kGapFrom; }
};

// A run of sequentially executed instructions: begin = first instruction, end = first byte
// of the last instruction (inclusive). begin == 0: where it started is unknown.
struct BtraceBlock {
  Addr begin = 0;
  Addr end = 0;
  bool operator==(const BtraceBlock&) const = default;
};

// What GDB decodes as a gap in a BTS trace: a block that ends before it begins.
inline constexpr BtraceBlock kGapBlock{1, 0};

enum class BtraceRead { All, New, Delta };

// Blocks newest first, as an `all` read gives them, and when each began (CLOCK_MONOTONIC ns,
// estimated between the collector's clock readings; 0: not known). began_ns is empty when
// the collector reads no clock.
struct TimedBlocks {
  std::vector<BtraceBlock> blocks;
  std::vector<std::uint64_t> began_ns;
};

// Blocks newest first, as qXfer:btrace:read sends them.
struct BtraceData {
  std::vector<BtraceBlock> blocks;
};

inline constexpr std::uint64_t kDefaultBtsBufferSize = 64 * 1024;  // GDB's default (bytes)
inline constexpr std::uint64_t kBtsSampleBytes = 24;               // perf header + ip + addr
inline constexpr std::uint64_t kDefaultBtraceMaxSize = 64 * 1024 * 1024;  // --btrace-max-size

// What the ring holds, from Qbtrace-conf:bts:size (bytes of BTS samples).
struct BtraceConfig {
  std::uint64_t bts_size = kDefaultBtsBufferSize;
};

struct BtraceStats {
  std::string backend;          // "bts", "soft", "step"
  std::uint64_t capacity = 0;   // samples the ring can hold
  std::uint64_t kept = 0;       // samples in the ring now
  std::uint64_t recorded = 0;   // samples ever recorded
  std::uint64_t lost = 0;       // samples overwritten or dropped
  std::uint64_t gaps = 0;       // places where the collector lost the thread's path
  std::uint64_t emulated = 0;   // SoftEmulate: branches performed by the server
  std::uint64_t stepped = 0;    // software collectors: instructions single-stepped
};

class BranchTracer {
 public:
  virtual ~BranchTracer() = default;
  // qXfer:btrace:read: all / new / delta. current_pc closes the newest block.
  // A delta that lost data is Errc::overflow (the wire says E.Overflow.).
  virtual base::Result<BtraceData> read(BtraceRead kind, Addr current_pc) = 0;
  virtual BtraceConfig conf() const = 0;
  virtual BtraceStats stats() const = 0;
  // GDB starts reading a history that began before it asked (a thread traced since birth):
  // GDB's own trace of the thread starts at its current pc, so the next delta cannot be
  // stitched onto it; it answers overflow, and GDB reads everything instead.
  virtual void new_reader() {}
  // The whole kept history with when each block began, where the collector reads a clock;
  // stopped_ns: when the thread stopped (no branch of it is later). GDB's reads are not moved
  // on by it, except where the collector has no clock (then it is read(All)).
  virtual base::Result<TimedBlocks> timed_history(Addr current_pc, std::uint64_t stopped_ns) {
    (void)stopped_ns;
    auto data = read(BtraceRead::All, current_pc);
    if (!data) {
      return data.error();
    }
    return TimedBlocks{std::move(data->blocks), {}};
  }
};

}  // namespace tracer
