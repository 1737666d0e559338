// When a thread's branches were recorded, as far as its collector read a clock: a mark is one
// clock reading taken when the ring's head stood at `position` (every sample before it was
// written earlier, every sample from it on later). Samples between two readings get a time
// spread evenly between them: an estimate, never more precise than the readings around it.
#pragma once

#include <chrono>
#include <cstdint>
#include <span>
#include <vector>

namespace tracer {

// The clock marks are read from: steady_clock is CLOCK_MONOTONIC, as the dbt recorder reads it.
inline std::uint64_t monotonic_ns(
    std::chrono::steady_clock::time_point t = std::chrono::steady_clock::now()) {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count());
}

struct TimeMark {
  std::uint64_t position = 0;  // the ring's head at the reading
  std::uint64_t t_ns = 0;      // CLOCK_MONOTONIC
  bool operator==(const TimeMark&) const = default;
};

// A bounded record of readings that covers a ring of `covered` samples: marks at least
// covered / capacity samples apart (older ones overwritten), plus the newest reading always.
class TimeMarks {
 public:
  TimeMarks(std::uint64_t capacity, std::uint64_t covered);

  // A reading; one that does not move forward in position or time is ignored.
  void add(std::uint64_t position, std::uint64_t t_ns);
  // Every kept reading, oldest first.
  std::vector<TimeMark> marks() const;

 private:
  std::uint64_t capacity_;
  std::uint64_t spacing_;
  std::vector<TimeMark> ring_;  // reading n at n % capacity_
  std::uint64_t head_ = 0;      // readings ever kept in ring_
  TimeMark latest_;             // the newest reading (also in ring_ when far enough apart)
  bool any_ = false;
};

// Appends the thread's stop (head then, time then) as the last reading, where it is one.
void add_stop_mark(std::vector<TimeMark>& marks, std::uint64_t head, std::uint64_t stopped_ns);

// When sample `position` was written, estimated from readings (oldest first), the last of
// which may be the thread's stop (head then, time then). 0: no reading before it.
std::uint64_t estimate_time(std::span<const TimeMark> marks, std::uint64_t position);

}  // namespace tracer
