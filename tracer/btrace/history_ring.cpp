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
                                             bool keep_start_unknown, Addr previous_pc) {
  std::vector<BtraceBlock> blocks;
  blocks.reserve(older.size() + newer.size() + 1);
  Addr end = current_pc;
  bool end_known = true;  // false right after (older than) a gap
  auto walk_back = [&](std::span<const BranchSample> piece) {
    for (auto it = piece.rbegin(); it != piece.rend(); ++it) {
      if (is_kernel_address(it->from)) {
        continue;  // a return from the kernel: the user-space block goes on across it
      }
      if (end_known) {
        blocks.push_back(BtraceBlock{it->to, end});
      }
      if (it->is_gap()) {
        blocks.push_back(kGapBlock);
        end_known = false;
        continue;
      }
      end = it->from;
      end_known = true;
    }
  };
  walk_back(newer);
  walk_back(older);
  if (!end_known && !keep_start_unknown) {
    blocks.pop_back();  // nothing older than the gap: the history starts after it
  }
  if (keep_start_unknown) {
    blocks.push_back(BtraceBlock{0, end_known ? end : previous_pc});
  }
  return blocks;
}

base::Error btrace_overflow_error() {
  return base::make_error(base::Errc::overflow, "Overflow.");
}

std::uint64_t ring_capacity(std::uint64_t bts_size) {
  return std::max<std::uint64_t>(1, bts_size / kBtsSampleBytes);
}

HistoryRing::HistoryRing(std::uint64_t bts_size) : capacity_(ring_capacity(bts_size)) {
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

BtraceStats HistoryRing::stats() const {
  BtraceStats s;
  s.capacity = capacity_;
  s.kept = kept();
  s.recorded = head_;
  s.lost = head_ - kept();
  s.gaps = gaps_;
  return s;
}

}  // namespace tracer
