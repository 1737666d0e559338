// PerfEvent: one thread's BTS perf event (btrace.md §9.2-9.3), its fd and its read-only ring
// mapping. Move-only; made by open_bts(). No <linux/*> here: the control page stays opaque.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "base/result.hpp"
#include "tracer/btrace/bts_decode.hpp"
#include "tracer/types.hpp"

namespace tracer {

class PerfEvent {
 public:
  // perf_event_open(branch-instructions, sample_period 1, ip+addr, user only) for one thread
  // and mmap of 1 + 2^n pages PROT_READ (overwrite mode), halving on failure.
  static base::Result<PerfEvent> open_bts(Tid tid, std::uint64_t requested_bytes);

  PerfEvent(PerfEvent&& other) noexcept;
  PerfEvent& operator=(PerfEvent&& other) noexcept;
  PerfEvent(const PerfEvent&) = delete;
  PerfEvent& operator=(const PerfEvent&) = delete;
  ~PerfEvent();

  int fd() const { return fd_; }
  std::uint64_t data_size() const { return data_size_; }  // bytes, a power of two
  // The control page's data_head (acquire load): bytes ever written, only grows.
  std::uint64_t data_head() const;
  // Copies the data area; retries (up to 5 times) while data_head moves during the copy.
  PerfSnapshot snapshot() const;

 private:
  PerfEvent(int fd, void* map, std::size_t map_len, std::size_t data_offset, std::uint64_t data_size);
  void reset();

  int fd_ = -1;
  void* map_ = nullptr;
  std::size_t map_len_ = 0;
  std::size_t data_offset_ = 0;
  std::uint64_t data_size_ = 0;
};

// What a user should read when perf_event_open(BTS) fails with errno `err`. paranoid is
// /proc/sys/kernel/perf_event_paranoid (-100 when unknown).
std::string perf_open_error_text(int err, int paranoid);

// What a user should read when mapping the BTS ring fails with errno `err` at every size.
std::string perf_map_error_text(int err);

// /proc/sys/kernel/perf_event_paranoid, or -100 when it cannot be read.
int read_perf_event_paranoid();

}  // namespace tracer
