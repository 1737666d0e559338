// decode_bts on data areas laid out exactly as the kernel writes them (btrace.md §9.4).
#include <catch2/catch.hpp>

#include <cstdint>
#include <vector>

#include "perf_ring_builder.hpp"
#include "tracer/btrace/bts_decode.hpp"

using test_btrace::PerfRingBuilder;
using tracer::BranchSample;
using tracer::decode_bts;
using Samples = std::vector<BranchSample>;

namespace {

BranchSample nth(std::uint64_t i) {
  return BranchSample{0x400000 + 0x10 * i, 0x500000 + 0x10 * i};
}

constexpr std::uint32_t kThrottle = 5;      // PERF_RECORD_THROTTLE: time, id, stream_id
constexpr std::uint32_t kItraceStart = 12;  // PERF_RECORD_ITRACE_START: pid, tid
constexpr std::uint32_t kSwitch = 14;       // PERF_RECORD_SWITCH: header only

}  // namespace

TEST_CASE("decode_bts: the byte layout of one PERF_RECORD_SAMPLE", "[bts]") {
  std::vector<std::uint8_t> data(64, 0);
  const std::uint8_t record[24] = {
      0x09, 0x00, 0x00, 0x00,                          // type PERF_RECORD_SAMPLE
      0x02, 0x00,                                      // misc PERF_RECORD_MISC_USER
      0x18, 0x00,                                      // size 24
      0x04, 0x10, 0x40, 0x00, 0x00, 0x00, 0x00, 0x00,  // ip   0x401004
      0x20, 0x10, 0x40, 0x00, 0x00, 0x00, 0x00, 0x00,  // addr 0x401020
  };
  std::copy(std::begin(record), std::end(record), data.begin());
  auto d = decode_bts(data, 24, 0);
  CHECK(d.samples == Samples{{0x401004, 0x401020}});
  CHECK_FALSE(d.lost);
  CHECK_FALSE(d.incomplete);
}

TEST_CASE("decode_bts: empty ring, and samples oldest first without wrap", "[bts]") {
  PerfRingBuilder ring(4096);
  auto empty = decode_bts(ring.data(), 0, 0);
  CHECK(empty.samples.empty());
  CHECK_FALSE(empty.lost);
  for (std::uint64_t i = 0; i < 5; ++i) {
    ring.sample(nth(i).from, nth(i).to);
  }
  auto all = decode_bts(ring.data(), ring.head(), 0);
  CHECK(all.samples == Samples{nth(0), nth(1), nth(2), nth(3), nth(4)});
  CHECK_FALSE(all.lost);
  auto since = decode_bts(ring.data(), ring.head(), 3 * 24);
  CHECK(since.samples == Samples{nth(3), nth(4)});
  CHECK_FALSE(since.lost);
  auto none = decode_bts(ring.data(), ring.head(), ring.head());
  CHECK(none.samples.empty());
  CHECK_FALSE(none.lost);
}

TEST_CASE("decode_bts: wrap-around with a record split after its header", "[bts][wrap]") {
  // 64-byte ring, three samples: the third occupies stream bytes 48..71, i.e. ring 48..63
  // (header, ip) and 0..7 (addr), overwriting the first sample's header.
  PerfRingBuilder ring(64);
  for (std::uint64_t i = 0; i < 3; ++i) {
    ring.sample(nth(i).from, nth(i).to);
  }
  REQUIRE(ring.head() == 72);
  auto d = decode_bts(ring.data(), ring.head(), 0);
  CHECK(d.samples == Samples{nth(1), nth(2)});
  CHECK(d.lost);              // the first sample is gone
  CHECK_FALSE(d.incomplete);  // a half-overwritten record at the edge is expected
  auto delta = decode_bts(ring.data(), ring.head(), 24);
  CHECK(delta.samples == Samples{nth(1), nth(2)});
  CHECK_FALSE(delta.lost);
}

TEST_CASE("decode_bts: wrap-around with a record split after its ip", "[bts][wrap]") {
  // A 16-byte record first shifts the samples: sample 1 is at stream 40..63, sample 2 at
  // 64..87 = ring 0..23, sample 3 at 88..111 = ring 24..47; then sample 4 at 112..135 is split:
  // ring 48..63 holds header and ip, ring 0..7 the addr.
  PerfRingBuilder ring(64);
  ring.record(kItraceStart, {0x1234});
  for (std::uint64_t i = 0; i < 5; ++i) {
    ring.sample(nth(i).from, nth(i).to);
  }
  REQUIRE(ring.head() == 16 + 5 * 24);
  REQUIRE((ring.head() - 24) % 64 == 48);  // the newest record starts 16 bytes before the end
  auto d = decode_bts(ring.data(), ring.head(), 0);
  CHECK(d.samples == Samples{nth(3), nth(4)});
  auto delta = decode_bts(ring.data(), ring.head(), ring.head() - 48);
  CHECK(delta.samples == Samples{nth(3), nth(4)});
  CHECK_FALSE(delta.lost);
}

TEST_CASE("decode_bts: every split position over many laps", "[bts][wrap]") {
  // 256-byte ring: 10 whole samples fit; after n samples the newest 10 are readable.
  for (int shift : {0, 8, 16}) {
    PerfRingBuilder ring(256);
    if (shift != 0) {
      ring.record(shift == 8 ? kSwitch : kItraceStart,
                  shift == 8 ? std::vector<std::uint64_t>{} : std::vector<std::uint64_t>{7});
    }
    for (std::uint64_t n = 1; n <= 100; ++n) {
      ring.sample(nth(n - 1).from, nth(n - 1).to);
      INFO("shift " << shift << ", " << n << " samples");
      auto d = decode_bts(ring.data(), ring.head(), 0);
      std::uint64_t fit = 10;
      if (n * 24 + static_cast<std::uint64_t>(shift) <= 256) {
        fit = n;  // nothing overwritten yet
      }
      Samples expected;
      for (std::uint64_t i = n - std::min(n, fit); i < n; ++i) {
        expected.push_back(nth(i));
      }
      CHECK(d.samples == expected);
      // A delta over the newest k samples is exact for every k that fits.
      for (std::uint64_t k = 0; k <= std::min<std::uint64_t>(n, 10); ++k) {
        auto delta = decode_bts(ring.data(), ring.head(), ring.head() - 24 * k);
        REQUIRE(delta.samples.size() == k);
        CHECK_FALSE(delta.lost);
        if (k > 0) {
          CHECK(delta.samples.front() == nth(n - k));
        }
      }
    }
  }
}

TEST_CASE("decode_bts: data before the window was overwritten", "[bts][overwrite]") {
  PerfRingBuilder ring(128);  // 5 whole samples
  for (std::uint64_t i = 0; i < 12; ++i) {
    ring.sample(nth(i).from, nth(i).to);
  }
  REQUIRE(ring.head() == 288);
  auto all = decode_bts(ring.data(), ring.head(), 0);
  CHECK(all.samples == Samples{nth(7), nth(8), nth(9), nth(10), nth(11)});
  CHECK(all.lost);
  auto inside = decode_bts(ring.data(), ring.head(), 8 * 24);
  CHECK(inside.samples == Samples{nth(8), nth(9), nth(10), nth(11)});
  CHECK_FALSE(inside.lost);
  auto edge = decode_bts(ring.data(), ring.head(), 6 * 24);  // 144 < 288 - 128: overwritten
  CHECK(edge.lost);
  CHECK(edge.samples == Samples{nth(7), nth(8), nth(9), nth(10), nth(11)});
  auto future = decode_bts(ring.data(), ring.head(), ring.head() + 24);
  CHECK(future.lost);
  CHECK(future.samples.empty());
}

TEST_CASE("decode_bts: PERF_RECORD_LOST ends the walk", "[bts][lost]") {
  PerfRingBuilder ring(4096);
  ring.sample(nth(0).from, nth(0).to);
  ring.sample(nth(1).from, nth(1).to);
  ring.lost(42, 17);
  const std::uint64_t after_lost = ring.head();
  ring.sample(nth(2).from, nth(2).to);
  ring.sample(nth(3).from, nth(3).to);
  auto all = decode_bts(ring.data(), ring.head(), 0);
  CHECK(all.samples == Samples{nth(2), nth(3)});  // older samples are not connected to these
  CHECK(all.incomplete);
  CHECK(all.lost);
  CHECK(all.lost_records == 17);
  auto delta = decode_bts(ring.data(), ring.head(), after_lost);
  CHECK(delta.samples == Samples{nth(2), nth(3)});
  CHECK_FALSE(delta.lost);
  CHECK_FALSE(delta.incomplete);
}

TEST_CASE("decode_bts: other record types are stepped over", "[bts][records]") {
  PerfRingBuilder ring(1024);
  ring.sample(nth(0).from, nth(0).to);
  ring.record(kThrottle, {123456789, 1, 1});  // 32 bytes
  ring.sample(nth(1).from, nth(1).to);
  ring.record(kItraceStart, {100});  // 16 bytes
  ring.record(kSwitch, {});          // 8 bytes
  ring.sample(nth(2).from, nth(2).to);
  auto d = decode_bts(ring.data(), ring.head(), 0);
  CHECK(d.samples == Samples{nth(0), nth(1), nth(2)});
  CHECK(d.skipped == 3);
  CHECK_FALSE(d.lost);
  CHECK_FALSE(d.incomplete);
}

TEST_CASE("decode_bts: kernel sources are dropped, user samples around them kept", "[bts][kernel]") {
  PerfRingBuilder ring(256);
  ring.sample(0x401105, 0x401107);  // not a real pair; only the kernel test matters here
  ring.sample(0xffffffff81e00190, 0x401107);
  ring.sample(0x401107, 0x401200);
  ring.sample(0xffff800000000000, 0x401200);
  auto d = decode_bts(ring.data(), ring.head(), 0);
  CHECK(d.samples == Samples{{0x401105, 0x401107}, {0x401107, 0x401200}});
  CHECK(d.kernel == 2);
  CHECK_FALSE(d.lost);
}

TEST_CASE("decode_bts: undecodable bytes stop the walk and mark the delta lost", "[bts][damage]") {
  PerfRingBuilder ring(512);
  ring.sample(nth(0).from, nth(0).to);
  ring.bytes(std::vector<std::uint8_t>(8, 0xff));  // not a record
  ring.sample(nth(1).from, nth(1).to);
  auto d = decode_bts(ring.data(), ring.head(), 0);
  CHECK(d.samples == Samples{nth(1)});
  CHECK(d.incomplete);
  CHECK(d.lost);
  // A sample with the wrong size (another sample_type) is stepped over, not misread.
  PerfRingBuilder odd(512);
  odd.sample(nth(0).from, nth(0).to);
  odd.record(tracer::kPerfRecordSample, {1, 2, 3});
  odd.sample(nth(1).from, nth(1).to);
  auto o = decode_bts(odd.data(), odd.head(), 0);
  CHECK(o.samples == Samples{nth(0), nth(1)});
  CHECK(o.skipped == 1);
}

TEST_CASE("bts_data_pages: pages rounded up to a power of two", "[bts][size]") {
  CHECK(tracer::bts_data_pages(0x10000, 4096) == 16);
  CHECK(tracer::bts_data_pages(0, 4096) == 1);
  CHECK(tracer::bts_data_pages(1, 4096) == 1);
  CHECK(tracer::bts_data_pages(4096, 4096) == 1);
  CHECK(tracer::bts_data_pages(4097, 4096) == 2);
  CHECK(tracer::bts_data_pages(3 * 4096, 4096) == 4);
  CHECK(tracer::bts_data_pages(5 * 4096 + 1, 4096) == 8);
  CHECK(tracer::bts_data_pages(0xffffffff, 4096) == 0x100000);
}

TEST_CASE("decode_bts: an i386 program's records: 32-bit addresses, zero-extended by the 64-bit kernel",
          "[bts][i386]") {
  // A compat task's branches are logged as linear addresses in the same 64-bit fields; its
  // libraries and vDSO sit just under 4 GiB, which is user space, not the kernel's.
  PerfRingBuilder ring(256);
  ring.sample(0x565561a7, 0xf7d8a2d0);          // call into libc (the PLT, then the library)
  ring.sample(0xf7fc1549, 0xffffffff81e00190);  // int $0x80 in __kernel_vsyscall: into the kernel
  ring.sample(0xffffffff81e00400, 0xf7fc154b);  // the kernel's return: its source is dropped
  ring.sample(0xf7d8a2f3, 0x565561ac);          // ret
  auto d = decode_bts(ring.data(), ring.head(), 0);
  CHECK(d.samples == Samples{{0x565561a7, 0xf7d8a2d0}, {0xf7fc1549, 0xffffffff81e00190}, {0xf7d8a2f3, 0x565561ac}});
  CHECK(d.kernel == 1);
  CHECK_FALSE(d.lost);
}
