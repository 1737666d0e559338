// HistoryRing: a thread's most recent branch samples plus what GDB has already read, so that
// qXfer:btrace:read all / new / delta are answered as gdbserver does (btrace.md §6).
#pragma once

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "base/result.hpp"
#include "tracer/btrace/branch_tracer.hpp"
#include "tracer/btrace/time_marks.hpp"
#include "tracer/types.hpp"

namespace tracer {

// User space ends below 0x0000800000000000 on x86-64; kernel addresses have bit 63 set
// (btrace.md §9.5, the fallback gdbserver uses when /proc/kallsyms is restricted).
constexpr bool is_kernel_address(Addr addr) {
  return (addr >> 63) != 0;
}

// Samples (oldest first) to BTS blocks, newest first: the first block ends at current_pc,
// each sample closes a block at its `to` and opens the next (older) one at its `from`.
// Samples whose `from` is a kernel address are skipped: they neither end nor start a block.
// keep_start_unknown: append the final {0, from of the oldest sample} block (delta only).
// A gap sample closes the block it found the thread in and becomes kGapBlock; the block before
// it has no known end and is left out. A delta whose oldest event is a gap still ends with the
// start-unknown block GDB stitches on, {0, previous_pc} (the pc of the previous read).
// An `all` read whose oldest event is a gap starts after it.
std::vector<BtraceBlock> blocks_from_samples(std::span<const BranchSample> oldest_first, Addr current_pc,
                                             bool keep_start_unknown, Addr previous_pc = 0);
// The same over samples held in two pieces (a ring that wrapped): `older`, then `newer`.
// opened_by, when given, gets for each block the index (in older, then newer) of the sample
// whose branch began it; kNoSample for a gap block and for a block whose start is unknown.
inline constexpr std::uint64_t kNoSample = ~std::uint64_t{0};
std::vector<BtraceBlock> blocks_from_samples(std::span<const BranchSample> older,
                                             std::span<const BranchSample> newer, Addr current_pc,
                                             bool keep_start_unknown, Addr previous_pc = 0,
                                             std::vector<std::uint64_t>* opened_by = nullptr);

// The whole kept history as an `all` read gives it, with when each block began: the time of
// the sample that began it, estimated from `marks` (oldest first; the caller appends the
// thread's stop as the last). first_position: the position of older's first sample.
TimedBlocks timed_blocks(std::span<const BranchSample> older, std::span<const BranchSample> newer,
                         std::uint64_t first_position, Addr current_pc, std::span<const TimeMark> marks);

// The error of a delta read that lost data; the wire text is gdbserver's "E.Overflow.".
base::Error btrace_overflow_error();

// Ring capacity in samples for a BTS buffer of bts_size bytes: bts_size / 24, at least 1.
std::uint64_t ring_capacity(std::uint64_t bts_size);

// What GDB has read of a ring that keeps its newest `capacity` samples, `head` written so
// far: qXfer:btrace:read all / new / delta as gdbserver answers them (btrace.md §6), for any
// ring (the server's own, the dbt recorder's). pieces(since) gives the kept samples written
// from position `since` on, oldest first, in at most two pieces.
class BtraceCursor {
 public:
  using Pieces = std::pair<std::span<const BranchSample>, std::span<const BranchSample>>;
  template <typename PiecesSince>
  base::Result<BtraceData> read(BtraceRead kind, Addr current_pc, std::uint64_t head, std::uint64_t capacity,
                                PiecesSince&& pieces) {
    BtraceData data;
    switch (kind) {
      case BtraceRead::Delta: {
        if (head - last_ > capacity || (fresh_reader_ && head > 0)) {
          fresh_reader_ = false;
          return btrace_overflow_error();
        }
        const Pieces p = pieces(last_);
        const auto& oldest = p.first.empty() ? p.second : p.first;
        if (!oldest.empty() && oldest.front().is_gap() && last_read_pc_ == 0) {
          // Nothing read yet, so no pc to stitch a gap-first delta onto: GDB reads it anew.
          return btrace_overflow_error();
        }
        data.blocks = blocks_from_samples(p.first, p.second, current_pc, true, last_read_pc_);
        break;
      }
      case BtraceRead::New:
        if (head == last_) {
          break;  // nothing new: the empty document (gdbserver 13 would crash here)
        }
        [[fallthrough]];
      case BtraceRead::All: {
        const Pieces p = pieces(0);
        data.blocks = blocks_from_samples(p.first, p.second, current_pc, false);
        break;
      }
    }
    last_ = head;
    last_read_pc_ = current_pc;
    fresh_reader_ = false;
    return data;
  }
  std::uint64_t last() const { return last_; }  // head at the previous successful read
  // The next delta reports overflow (when anything was recorded), so the reader reads all.
  void new_reader() { fresh_reader_ = true; }

 private:
  std::uint64_t last_ = 0;
  Addr last_read_pc_ = 0;  // current_pc of the previous successful read
  bool fresh_reader_ = false;
};

class HistoryRing {
 public:
  explicit HistoryRing(std::uint64_t bts_size = kDefaultBtsBufferSize);

  // Appends one sample, overwriting the oldest when the ring is full. O(1).
  void push(const BranchSample& sample);
  // `count` branches the collector recorded and lost before they reached this ring (its own ring
  // went round between two reads): counted as recorded and lost (the gap itself is pushed).
  void missed(std::uint64_t count) { missed_ += count; }
  // A clock reading (CLOCK_MONOTONIC) taken now, at the current head.
  void mark_time(std::uint64_t t_ns) { marks_.add(head_, t_ns); }
  // The kept history with when each block began; stopped_ns: when the thread stopped.
  TimedBlocks timed(Addr current_pc, std::uint64_t stopped_ns) const;

  // qXfer:btrace:read: all / new / delta as in btrace.md §6. Moves `last` to `head` on
  // success; a delta that lost samples is Errc::overflow ("Overflow.") and moves nothing.
  base::Result<BtraceData> read(BtraceRead kind, Addr current_pc);

  // The kept samples written after position `since` (all of them if `since` is older), oldest
  // first, as a copy (tests, differential runs).
  std::vector<BranchSample> samples_since(std::uint64_t since) const;

  std::uint64_t capacity() const { return capacity_; }
  std::uint64_t head() const { return head_; }  // samples ever pushed
  std::uint64_t last() const { return cursor_.last(); }  // head at the previous successful read
  // The next delta reports overflow (when anything was recorded), so the reader reads all.
  void new_reader() { cursor_.new_reader(); }
  std::uint64_t kept() const { return head_ < capacity_ ? head_ : capacity_; }
  // capacity, kept, recorded and lost (overwritten here, or missed before); backend is left empty.
  BtraceStats stats() const;

 private:
  // The kept samples written after `since`, in place: the older piece and the newer one.
  std::pair<std::span<const BranchSample>, std::span<const BranchSample>> pieces_since(std::uint64_t since) const;

  std::uint64_t capacity_;
  std::uint64_t gaps_ = 0;
  std::uint64_t missed_ = 0;
  std::vector<BranchSample> buf_;  // grows up to capacity_, then sample n lives at n % capacity_
  std::uint64_t head_ = 0;
  BtraceCursor cursor_;
  TimeMarks marks_;
};

}  // namespace tracer
