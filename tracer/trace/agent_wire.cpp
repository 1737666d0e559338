#include "tracer/trace/agent_wire.hpp"

#include <cstring>

namespace tracer::trace {
namespace {

class Writer {
 public:
  template <class T>
  void put(T v) {
    const auto* p = reinterpret_cast<const std::uint8_t*>(&v);
    out.insert(out.end(), p, p + sizeof v);
  }
  void put_bytes(const Bytes& b) {
    put(static_cast<std::uint32_t>(b.size()));
    out.insert(out.end(), b.begin(), b.end());
  }
  Bytes out;
};

class Reader {
 public:
  explicit Reader(std::span<const std::uint8_t> in) : in_(in) {}
  template <class T>
  bool get(T& v) {
    if (in_.size() - at_ < sizeof v) {
      return false;
    }
    std::memcpy(&v, in_.data() + at_, sizeof v);
    at_ += sizeof v;
    return true;
  }
  bool get_bytes(Bytes& b) {
    std::uint32_t n = 0;
    return get(n) && get_raw(b, n, n);
  }
  // n bytes (of which `keep` are kept) into b.
  bool get_raw(Bytes& b, std::size_t n, std::size_t keep) {
    if (in_.size() - at_ < n) {
      return false;
    }
    b.assign(in_.begin() + static_cast<std::ptrdiff_t>(at_), in_.begin() + static_cast<std::ptrdiff_t>(at_ + keep));
    at_ += n;
    return true;
  }

 private:
  std::span<const std::uint8_t> in_;
  std::size_t at_ = 0;
};

base::Error malformed(const char* what) { return base::make_error(base::Errc::malformed, what); }

}  // namespace

Bytes encode_agent_tracepoints(const std::vector<const Tracepoint*>& tracepoints) {
  Writer w;
  w.put(static_cast<std::uint32_t>(tracepoints.size()));
  for (const Tracepoint* tp : tracepoints) {
    w.put(tp->number);
    w.put(tp->address);
    w.put(tp->pass_count);
    w.put(static_cast<std::uint8_t>(tp->condition.has_value()));
    w.put_bytes(tp->condition.value_or(Bytes{}));
    w.put(static_cast<std::uint32_t>(tp->actions.size()));
    for (const Action& a : tp->actions) {
      w.put(static_cast<std::uint8_t>(a.kind));
      w.put(static_cast<std::int32_t>(a.base_register));
      w.put(a.offset);
      w.put(a.length);
      w.put_bytes(a.bytecode);
    }
  }
  return std::move(w.out);
}

Result<std::vector<Tracepoint>> decode_agent_tracepoints(std::span<const std::uint8_t> bytes) {
  Reader r(bytes);
  std::uint32_t count = 0;
  if (!r.get(count)) {
    return malformed("no tracepoint count");
  }
  std::vector<Tracepoint> out;
  for (std::uint32_t i = 0; i < count; ++i) {
    Tracepoint tp;
    std::uint8_t has_condition = 0;
    Bytes condition;
    std::uint32_t actions = 0;
    if (!r.get(tp.number) || !r.get(tp.address) || !r.get(tp.pass_count) || !r.get(has_condition) ||
        !r.get_bytes(condition) || !r.get(actions)) {
      return malformed("a tracepoint cut short");
    }
    if (has_condition != 0) {
      tp.condition = std::move(condition);
    }
    for (std::uint32_t k = 0; k < actions; ++k) {
      Action a;
      std::uint8_t kind = 0;
      std::int32_t base = 0;
      if (!r.get(kind) || kind > static_cast<std::uint8_t>(Action::Kind::Expression) || !r.get(base) ||
          !r.get(a.offset) || !r.get(a.length) || !r.get_bytes(a.bytecode)) {
        return malformed("an action cut short");
      }
      a.kind = static_cast<Action::Kind>(kind);
      a.base_register = base;
      tp.actions.push_back(std::move(a));
    }
    out.push_back(std::move(tp));
  }
  return out;
}

std::size_t record_size(bool registers, std::size_t save_bytes, std::span<const std::size_t> block_lengths) {
  std::size_t n = kRecordHeader;
  if (registers) {
    n += kGprWords * 8 + padded8(save_bytes);
  }
  for (std::size_t len : block_lengths) {
    n += 16 + padded8(len);
  }
  return n;
}

void write_record(const AgentRecord& rec, std::span<std::uint8_t> out) {
  std::memset(out.data(), 0, out.size());
  auto put = [&](std::size_t at, const void* p, std::size_t n) { std::memcpy(out.data() + at, p, n); };
  const auto length = static_cast<std::uint32_t>(out.size());
  const auto words = static_cast<std::uint32_t>(rec.gpr.empty() ? 0 : kGprWords);
  const auto save = static_cast<std::uint32_t>(rec.gpr.empty() ? 0 : rec.save_area.size());
  put(0, &length, 4);
  put(4, &rec.index, 4);
  put(8, &rec.pc, 8);
  put(16, &words, 4);
  put(20, &save, 4);
  put(24, &rec.generation, 4);
  std::size_t at = kRecordHeader;
  if (words != 0) {
    put(at, rec.gpr.data(), kGprWords * 8);
    at += kGprWords * 8;
    put(at, rec.save_area.data(), save);
    at += padded8(save);
  }
  for (const MemoryBlock& b : rec.memory) {
    const auto len = static_cast<std::uint32_t>(b.bytes.size());
    put(at, &b.address, 8);
    put(at + 8, &len, 4);
    put(at + 16, b.bytes.data(), len);
    at += 16 + padded8(len);
  }
}

Result<std::vector<AgentRecord>> read_records(std::span<const std::uint8_t> ring, std::uint64_t tail,
                                              std::uint64_t head) {
  std::vector<AgentRecord> out;
  const std::uint64_t size = ring.size();
  if (size == 0 || size % 8 != 0 || head < tail || head - tail > size) {
    return malformed("ring positions out of order");
  }
  while (tail < head) {
    const std::size_t at = tail % size;
    Reader r(ring.subspan(at));
    std::uint32_t length = 0;
    AgentRecord rec;
    if (!r.get(length) || !r.get(rec.index) || length < 8 || length % 8 != 0 || length > size - at ||
        length > head - tail) {
      return malformed("a record's length is out of the ring");
    }
    tail += length;
    if (rec.index == kRingSkip) {
      continue;
    }
    Reader body(ring.subspan(at, length));
    std::uint32_t skip = 0;
    std::uint32_t words = 0;
    std::uint32_t save = 0;
    if (!body.get(skip) || !body.get(skip) || !body.get(rec.pc) || !body.get(words) || !body.get(save) ||
        !body.get(rec.generation) || !body.get(skip) || (words != 0 && words != kGprWords)) {
      return malformed("a record's header is cut short");
    }
    if (words != 0) {
      rec.gpr.resize(kGprWords);
      for (auto& w : rec.gpr) {
        if (!body.get(w)) {
          return malformed("a record's registers are cut short");
        }
      }
      if (!body.get_raw(rec.save_area, padded8(save), save)) {
        return malformed("a record's save area is cut short");
      }
    }
    std::size_t left = length - kRecordHeader - (words != 0 ? kGprWords * 8 + padded8(save) : 0);
    while (left > 0) {
      MemoryBlock b;
      std::uint32_t len = 0;
      std::uint32_t zero = 0;
      if (left < 16 || !body.get(b.address) || !body.get(len) || !body.get(zero) || padded8(len) > left - 16 ||
          !body.get_raw(b.bytes, padded8(len), len)) {
        return malformed("a record's memory block is cut short");
      }
      left -= 16 + padded8(len);
      rec.memory.push_back(std::move(b));
    }
    out.push_back(std::move(rec));
  }
  return out;
}

}  // namespace tracer::trace
