// HistoryRing and the samples-to-blocks walk shared by every backend (btrace.md §6, §9.4).
#include "tracer/btrace/history_ring.hpp"

#include <algorithm>
#include <cassert>

namespace tracer {

std::vector<BtraceBlock> blocks_from_samples(std::span<const BranchSample> oldest_first, Addr current_pc,
                                             bool keep_start_unknown, Addr previous_pc) {
  return blocks_from_samples(oldest_first, {}, current_pc, keep_start_unknown, previous_pc);
}

std::vector<BtraceBlock> blocks_from_samples(std::span<const BranchSample> older,
                                             std::span<const BranchSample> newer, Addr current_pc,
                                             bool keep_start_unknown, Addr previous_pc,
                                             std::vector<std::uint64_t>* opened_by) {
  std::vector<BtraceBlock> blocks;
  blocks.reserve(older.size() + newer.size() + 1);
  auto add = [&](BtraceBlock block, std::uint64_t sample) {
    blocks.push_back(block);
    if (opened_by != nullptr) {
      opened_by->push_back(sample);
    }
  };
  Addr end = current_pc;
  bool end_known = true;  // false right after (older than) a gap
  auto walk_back = [&](std::span<const BranchSample> piece, std::uint64_t first_index) {
    for (std::size_t i = piece.size(); i-- > 0;) {
      const BranchSample& s = piece[i];
      if (is_kernel_address(s.from)) {
        continue;  // a return from the kernel: the user-space block goes on across it
      }
      if (end_known) {
        add(BtraceBlock{s.to, end}, first_index + i);
      }
      if (s.is_gap()) {
        if (end_known) {  // (two gaps in a row are one: nothing known ran between them)
          add(kGapBlock, kNoSample);
        }
        end_known = false;
        continue;
      }
      end = s.from;
      end_known = true;
    }
  };
  walk_back(newer, older.size());
  walk_back(older, 0);
  if (!end_known && !keep_start_unknown) {
    blocks.pop_back();  // nothing older than the gap: the history starts after it
    if (opened_by != nullptr) {
      opened_by->pop_back();
    }
  }
  if (keep_start_unknown) {
    add(BtraceBlock{0, end_known ? end : previous_pc}, kNoSample);
  }
  return blocks;
}

TimedBlocks timed_blocks(std::span<const BranchSample> older, std::span<const BranchSample> newer,
                         std::uint64_t first_position, Addr current_pc, std::span<const TimeMark> marks) {
  TimedBlocks out;
  std::vector<std::uint64_t> opened_by;
  out.blocks = blocks_from_samples(older, newer, current_pc, false, 0, &opened_by);
  out.began_ns.reserve(opened_by.size());
  for (const std::uint64_t sample : opened_by) {
    out.began_ns.push_back(sample == kNoSample ? 0 : estimate_time(marks, first_position + sample));
  }
  return out;
}

base::Error btrace_overflow_error() {
  return base::make_error(base::Errc::overflow, "Overflow.");
}

std::uint64_t ring_capacity(std::uint64_t bts_size) {
  return std::max<std::uint64_t>(1, bts_size / kBtsSampleBytes);
}

namespace {

// Readings kept per ring: enough for a timeline of its last calls, a quarter of a sample's
// cost at most.
std::uint64_t marks_for(std::uint64_t capacity) {
  return std::clamp<std::uint64_t>(capacity / 4, 64, 65536);
}

}  // namespace

HistoryRing::HistoryRing(std::uint64_t bts_size)
    : capacity_(ring_capacity(bts_size)), marks_(marks_for(capacity_), capacity_) {
}

void HistoryRing::push(const BranchSample& sample) {
  if (sample.is_gap()) {
    ++gaps_;
  }
  if (buf_.size() < capacity_) {
    // Grow lazily (a huge requested size costs nothing until used), never past the capacity.
    if (buf_.size() == buf_.capacity()) {
      const std::uint64_t doubled = std::max<std::uint64_t>(64, 2 * buf_.size());
      buf_.reserve(static_cast<std::size_t>(std::min(capacity_, doubled)));
    }
    buf_.push_back(sample);
  } else {
    buf_[head_ % capacity_] = sample;
  }
  ++head_;
}

std::pair<std::span<const BranchSample>, std::span<const BranchSample>> HistoryRing::pieces_since(
    std::uint64_t since) const {
  std::uint64_t first = std::max(since, head_ - kept());
  if (first >= head_) {
    return {};
  }
  const std::span<const BranchSample> all(buf_);
  auto at = [&](std::uint64_t n) { return static_cast<std::size_t>(n % capacity_); };
  std::size_t begin = at(first);
  std::size_t count = static_cast<std::size_t>(head_ - first);
  if (begin + count <= all.size()) {
    return {all.subspan(begin, count), {}};
  }
  return {all.subspan(begin), all.first(count - (all.size() - begin))};
}

std::vector<BranchSample> HistoryRing::samples_since(std::uint64_t since) const {
  auto [older, newer] = pieces_since(since);
  std::vector<BranchSample> out(older.begin(), older.end());
  out.insert(out.end(), newer.begin(), newer.end());
  return out;
}

base::Result<BtraceData> HistoryRing::read(BtraceRead kind, Addr current_pc) {
  return cursor_.read(kind, current_pc, head_, capacity_, [this](std::uint64_t since) { return pieces_since(since); });
}

TimedBlocks HistoryRing::timed(Addr current_pc, std::uint64_t stopped_ns) const {
  std::vector<TimeMark> marks = marks_.marks();
  add_stop_mark(marks, head_, stopped_ns);
  auto [older, newer] = pieces_since(0);
  return timed_blocks(older, newer, head_ - kept(), current_pc, marks);
}

BtraceStats HistoryRing::stats() const {
  BtraceStats s;
  s.capacity = capacity_;
  s.kept = kept();
  s.recorded = head_ + missed_;
  s.lost = head_ - kept() + missed_;
  s.gaps = gaps_;
  return s;
}

}  // namespace tracer
