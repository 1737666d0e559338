// The server's side of the dbt recorder's rings (dbt_ring.h): a thread's ring file mapped
// read-only, read while the recorder writes it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/result.hpp"
#include "tracer/btrace/branch_tracer.hpp"
#include "tracer/btrace/time_marks.hpp"
#include "tracer/types.hpp"

namespace tracer {

class DbtRing {
 public:
  // Maps DIR/hsdbt.PID.TID (or any path); refuses a file that is no ring of this layout.
  static base::Result<DbtRing> open(const std::string& path);
  ~DbtRing();
  DbtRing(DbtRing&& other) noexcept;
  DbtRing& operator=(DbtRing&& other) noexcept;
  DbtRing(const DbtRing&) = delete;
  DbtRing& operator=(const DbtRing&) = delete;

  int pid() const;
  int tid() const;
  std::uint64_t capacity() const;
  std::uint64_t head() const;  // samples ever written
  std::uint64_t gaps() const;  // transfers the recorder could not describe
  bool exited() const;         // the thread is gone; the ring holds its last branches
  std::uint64_t born_ns() const;    // CLOCK_MONOTONIC of its first instruction (0: not yet)
  std::uint64_t exited_ns() const;  // CLOCK_MONOTONIC of its exit (0: it lives)

  // The samples written from position `since` on that are still in the ring, oldest first
  // (samples the recorder overwrote while they were copied are left out); *lost, when given,
  // gets how many of those asked for were overwritten already.
  std::vector<BranchSample> samples_since(std::uint64_t since, std::uint64_t* lost = nullptr) const;
  // The recorder's clock readings, oldest first, the newest included; readings out of order
  // (the program scribbled on the file, or a torn read while the thread runs) are left out.
  std::vector<TimeMark> time_marks() const;

 private:
  DbtRing(const void* map, std::size_t size) : map_(map), size_(size) {}
  const void* map_ = nullptr;
  std::size_t size_ = 0;
};

// The rings of process pid in dir, the leader's first, then by tid.
std::vector<std::string> dbt_ring_paths(const std::string& dir, int pid);

}  // namespace tracer
