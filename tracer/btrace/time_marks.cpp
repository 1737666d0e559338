#include "tracer/btrace/time_marks.hpp"

#include <algorithm>

namespace tracer {

TimeMarks::TimeMarks(std::uint64_t capacity, std::uint64_t covered)
    : capacity_(std::max<std::uint64_t>(2, capacity)),
      spacing_(std::max<std::uint64_t>(1, covered / capacity_)) {
}

void TimeMarks::add(std::uint64_t position, std::uint64_t t_ns) {
  if (any_ && (position < latest_.position || t_ns < latest_.t_ns)) {
    return;
  }
  latest_ = TimeMark{position, t_ns};
  any_ = true;
  const bool far_enough = head_ == 0 || position - ring_[(head_ - 1) % capacity_].position >= spacing_;
  if (!far_enough) {
    return;
  }
  if (ring_.size() < capacity_) {
    ring_.push_back(latest_);
  } else {
    ring_[head_ % capacity_] = latest_;
  }
  ++head_;
}

std::vector<TimeMark> TimeMarks::marks() const {
  std::vector<TimeMark> out;
  const std::uint64_t kept = std::min<std::uint64_t>(head_, capacity_);
  out.reserve(kept + 1);
  for (std::uint64_t n = head_ - kept; n < head_; ++n) {
    out.push_back(ring_[n % capacity_]);
  }
  if (any_ && (out.empty() || out.back() != latest_)) {
    out.push_back(latest_);
  }
  return out;
}

void add_stop_mark(std::vector<TimeMark>& marks, std::uint64_t head, std::uint64_t stopped_ns) {
  if (stopped_ns != 0 &&
      (marks.empty() || (marks.back().t_ns <= stopped_ns && marks.back().position <= head))) {
    marks.push_back(TimeMark{head, stopped_ns});
  }
}

std::uint64_t estimate_time(std::span<const TimeMark> marks, std::uint64_t position) {
  // The last reading taken before sample `position` was written (head <= position), and the
  // first after (head > position).
  auto after = std::upper_bound(marks.begin(), marks.end(), position,
                                [](std::uint64_t p, const TimeMark& m) { return p < m.position; });
  if (after == marks.begin()) {
    return 0;
  }
  const TimeMark& lower = *std::prev(after);
  if (after == marks.end()) {
    return lower.t_ns;  // written after the last reading: no later one bounds it
  }
  const TimeMark& upper = *after;
  const double share = static_cast<double>(position - lower.position + 1) /
                       static_cast<double>(upper.position - lower.position);
  return lower.t_ns + static_cast<std::uint64_t>(share * static_cast<double>(upper.t_ns - lower.t_ns));
}

}  // namespace tracer
