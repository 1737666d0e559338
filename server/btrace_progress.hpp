// How a long recording by a software collector goes, said at most every few seconds (the server
// puts it on its standard error and in GDB's console): GDB waiting for a stop that a slow
// collector holds back would seem hung otherwise. Read from the collectors' own counts
// (BranchTracer::stats).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>

#include "tracer/target.hpp"

namespace server {

class BtraceProgress {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr auto kPoll = std::chrono::seconds(1);   // how often tick is called
  static constexpr auto kEvery = std::chrono::seconds(5);  // the least time between two lines

  // say: one line to the user. dbt_built: the recorder can be suggested.
  BtraceProgress(std::function<void(const std::string&)> say, bool dbt_built)
      : say_(std::move(say)), dbt_built_(dbt_built) {}

  // Called every kPoll or so while the program runs: every kEvery, says how many branches the
  // software collectors recorded, and how fast, when they recorded since the last line.
  void tick(tracer::Target& target, Clock::time_point now);
  // The program stopped: the next run's count starts again.
  void stopped() { running_since_.reset(); }

 private:
  std::function<void(const std::string&)> say_;
  bool dbt_built_;
  std::optional<Clock::time_point> running_since_;
  std::uint64_t at_start_ = 0;  // branches recorded when this run began
  std::uint64_t last_ = 0;      // at the last line
  Clock::time_point last_said_{};  // the last line's time (or the run's start)
  bool advised_ = false;        // the advice to use a faster collector is given once
};

// "hindsight: soft has recorded 1.2 million branches in 10 s (120000 a second)".
std::string progress_line(const std::string& backend, std::uint64_t branches, double seconds);

}  // namespace server
