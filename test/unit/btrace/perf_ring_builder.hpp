// Lays out a perf_event data area exactly as the kernel writes it (perf_output_copy): each
// record is an 8-byte perf_event_header {u32 type; u16 misc; u16 size} and its payload, written
// at data_head % size with wrap-around, data_head counting every byte ever written.
#pragma once

#include <cstdint>
#include <vector>

#include "tracer/btrace/bts_decode.hpp"

namespace test_btrace {

class PerfRingBuilder {
 public:
  explicit PerfRingBuilder(std::size_t size) : data_(size, 0) {}

  // PERF_RECORD_SAMPLE with sample_type IP | ADDR: branch source, branch target.
  void sample(std::uint64_t from, std::uint64_t to) { record(tracer::kPerfRecordSample, {from, to}); }
  // PERF_RECORD_LOST: {u64 id; u64 lost}.
  void lost(std::uint64_t id, std::uint64_t count) { record(tracer::kPerfRecordLost, {id, count}); }
  // Any record: header then the payload words.
  void record(std::uint32_t type, const std::vector<std::uint64_t>& words, std::uint16_t misc = 1) {
    const auto size = static_cast<std::uint16_t>(8 + 8 * words.size());
    put(static_cast<std::uint64_t>(type) | static_cast<std::uint64_t>(misc) << 32 |
        static_cast<std::uint64_t>(size) << 48);
    for (std::uint64_t w : words) {
      put(w);
    }
  }
  // Raw bytes (damage).
  void bytes(const std::vector<std::uint8_t>& raw) {
    for (std::uint8_t b : raw) {
      data_[head_ % data_.size()] = b;
      ++head_;
    }
  }

  const std::vector<std::uint8_t>& data() const { return data_; }
  std::uint64_t head() const { return head_; }
  tracer::PerfSnapshot snapshot() const { return tracer::PerfSnapshot{data_, head_, 0}; }

 private:
  void put(std::uint64_t word) {
    for (int i = 0; i < 8; ++i) {
      data_[head_ % data_.size()] = static_cast<std::uint8_t>(word >> (8 * i));
      ++head_;
    }
  }

  std::vector<std::uint8_t> data_;
  std::uint64_t head_ = 0;
};

}  // namespace test_btrace
