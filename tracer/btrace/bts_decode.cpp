// decode_bts: the backwards walk over a copied perf_event ring (btrace.md §9.4).
//
// Records can only be found walking forwards from a known start, but in overwrite mode the
// oldest record is usually half overwritten, so the walk goes backwards from data_head. A
// record ending at `pos` is the smallest multiple-of-8 size s whose header at pos - s claims
// size s and a known type. That is unambiguous for our records: the ip/addr words of a sample
// read as a header have size 0 (user address, top 16 bits clear) or 0xffff (kernel address).
#include "tracer/btrace/bts_decode.hpp"

#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cassert>
#include <optional>

#include "tracer/btrace/history_ring.hpp"

namespace tracer {

namespace {

constexpr std::uint64_t kSampleBytes = kPerfHeaderBytes + 16;  // header, ip, addr
constexpr std::uint64_t kMaxRecordBytes = 0xfff8;              // header.size is a u16

struct Header {
  std::uint32_t type = 0;
  std::uint16_t misc = 0;
  std::uint16_t size = 0;
};

// The data area seen as an endless stream: byte n is data[n % size].
class RingView {
 public:
  explicit RingView(std::span<const std::uint8_t> data) : data_(data), mask_(data.size() - 1) {}

  std::uint64_t u64(std::uint64_t pos) const {
    std::uint64_t value = 0;
    for (unsigned i = 0; i < 8; ++i) {
      value |= static_cast<std::uint64_t>(data_[(pos + i) & mask_]) << (8 * i);  // little endian
    }
    return value;
  }

  Header header(std::uint64_t pos) const {
    std::uint64_t word = u64(pos);
    return Header{static_cast<std::uint32_t>(word), static_cast<std::uint16_t>(word >> 32),
                  static_cast<std::uint16_t>(word >> 48)};
  }

 private:
  std::span<const std::uint8_t> data_;
  std::uint64_t mask_;
};

// Size of the record that ends at `pos`, looking back at most `avail` bytes.
std::optional<std::uint64_t> record_ending_at(const RingView& ring, std::uint64_t pos, std::uint64_t avail) {
  std::uint64_t limit = std::min(avail, kMaxRecordBytes);
  for (std::uint64_t s = kPerfHeaderBytes; s <= limit; s += 8) {
    Header h = ring.header(pos - s);
    if (h.size == s && h.type >= 1 && h.type <= kPerfRecordMaxKnown) {
      return s;
    }
  }
  return std::nullopt;
}

}  // namespace

BtsDecoded decode_bts(std::span<const std::uint8_t> data, std::uint64_t data_head, std::uint64_t since) {
  assert(data.size() >= kPerfHeaderBytes && std::has_single_bit(data.size()));
  BtsDecoded out;
  const std::uint64_t size = data.size();
  const std::uint64_t window_start = data_head > size ? data_head - size : 0;  // older bytes are gone
  if (since > data_head) {
    since = data_head;  // a position from the future: nothing is trustworthy
    out.lost = true;
  }
  if (since < window_start) {
    out.lost = true;
  }
  const std::uint64_t from = std::max(since, window_start);

  RingView ring(data);
  std::uint64_t pos = data_head;
  while (pos > from) {
    std::optional<std::uint64_t> rec = record_ending_at(ring, pos, pos - from);
    if (!rec) {
      // A partial record at the overwritten edge is expected; anywhere else it is damage.
      out.incomplete = from == since;
      break;
    }
    std::uint64_t start = pos - *rec;
    Header h = ring.header(start);
    if (h.type == kPerfRecordSample && *rec == kSampleBytes) {
      BranchSample s{ring.u64(start + 8), ring.u64(start + 16)};
      if (is_kernel_address(s.from)) {
        ++out.kernel;
      } else {
        out.samples.push_back(s);
      }
    } else if (h.type == kPerfRecordLost) {
      out.lost_records = *rec >= kSampleBytes ? ring.u64(start + 16) : 0;  // {id, lost}
      out.incomplete = true;
      pos = start;
      break;
    } else {
      ++out.skipped;
    }
    pos = start;
  }
  if (pos > since) {
    out.lost = true;  // the walk did not get back to the previous read
  }
  std::reverse(out.samples.begin(), out.samples.end());
  return out;
}

base::Result<BtraceData> read_bts_snapshot(const PerfSnapshot& snap, BtraceRead kind, Addr current_pc,
                                           std::uint64_t& last_head) {
  const std::uint64_t size = snap.data.size();
  BtraceData out;
  if (kind == BtraceRead::New && snap.head == last_head) {
    return out;  // nothing new: the empty document
  }
  const bool delta = kind == BtraceRead::Delta;
  if (delta && (snap.head < last_head || snap.head - last_head > size)) {
    return btrace_overflow_error();
  }
  const std::uint64_t since = delta ? last_head : 0;
  const std::uint64_t from = std::max(since, snap.stable_from);
  BtsDecoded decoded = decode_bts(snap.data, snap.head, from);
  if (delta && (decoded.lost || from > since)) {
    return btrace_overflow_error();
  }
  out.blocks = blocks_from_samples(decoded.samples, current_pc, delta);
  last_head = snap.head;
  return out;
}

std::uint64_t bts_data_pages(std::uint64_t requested_bytes, std::uint64_t page_size) {
  assert(page_size > 0);
  std::uint64_t pages = requested_bytes / page_size + (requested_bytes % page_size != 0 ? 1 : 0);
  pages = std::max<std::uint64_t>(pages, 1);
  return std::bit_ceil(pages);
}

BtraceConfig as_kernel_sizes_it(BtraceConfig config) {
  const std::uint64_t page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
  config.bts_size = bts_data_pages(config.bts_size, page) * page;
  return config;
}

}  // namespace tracer
