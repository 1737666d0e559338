#include "tracer/trace/frames.hpp"

#include <algorithm>

namespace tracer::trace {
namespace {

constexpr std::size_t kMemoryBlockHeader = 1 + 8 + 2;
constexpr std::size_t kVariableBlock = 1 + 4 + 8;
// gdbserver keeps room for an end marker (an empty frame header) after the last frame.
constexpr std::size_t kEndMarker = kFrameHeaderSize;

void put(Bytes& out, std::uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) {
    out.push_back(static_cast<std::uint8_t>(value >> (8 * i)));
  }
}

}  // namespace

std::size_t Frame::size() const {
  std::size_t n = kFrameHeaderSize;
  if (registers) {
    n += 1 + registers->size();
  }
  for (const MemoryBlock& m : memory) {
    n += kMemoryBlockHeader + m.bytes.size();
  }
  return n + variables.size() * kVariableBlock;
}

Bytes Frame::read(Addr addr, std::size_t len) const {
  for (const MemoryBlock& m : memory) {
    if (m.address <= addr && addr - m.address < m.bytes.size()) {
      const std::size_t from = addr - m.address;
      const std::size_t n = std::min(len, m.bytes.size() - from);
      return Bytes(m.bytes.begin() + static_cast<std::ptrdiff_t>(from),
                   m.bytes.begin() + static_cast<std::ptrdiff_t>(from + n));
    }
  }
  return {};
}

std::optional<std::int64_t> Frame::variable(std::uint32_t number) const {
  std::optional<std::int64_t> value;
  for (const auto& [n, v] : variables) {
    if (n == number) {
      value = v;
    }
  }
  return value;
}

Bytes Frame::serialize() const {
  Bytes out;
  out.reserve(size());
  put(out, tracepoint, 2);
  put(out, size() - kFrameHeaderSize, 4);
  if (registers) {
    out.push_back('R');
    out.insert(out.end(), registers->begin(), registers->end());
  }
  for (const MemoryBlock& m : memory) {
    out.push_back('M');
    put(out, m.address, 8);
    put(out, m.bytes.size(), 2);
    out.insert(out.end(), m.bytes.begin(), m.bytes.end());
  }
  for (const auto& [n, v] : variables) {
    out.push_back('V');
    put(out, n, 4);
    put(out, static_cast<std::uint64_t>(v), 8);
  }
  return out;
}

void Buffer::reset(std::uint64_t size) {
  size_ = size;
  used_ = 0;
  created_ = 0;
  frames_.clear();
}

bool Buffer::add(Frame frame) {
  const std::size_t need = frame.size();
  while (used_ + need + kEndMarker > size_) {
    if (!circular_ || frames_.empty()) {
      return false;
    }
    used_ -= frames_.front().size();
    frames_.pop_front();
  }
  used_ += need;
  ++created_;
  frames_.push_back(std::move(frame));
  return true;
}

std::optional<std::uint64_t> Buffer::next(const FrameQuery& query, std::optional<std::uint64_t> after) const {
  if (query.kind == FrameQuery::Kind::Number) {
    return find(query.number) != nullptr ? std::optional(query.number) : std::nullopt;
  }
  for (std::uint64_t n = after ? *after + 1 : 0; n < frames_.size(); ++n) {
    const Frame& f = frames_[n];
    const bool inside = query.start <= f.pc && f.pc <= query.end;
    const bool match = query.kind == FrameQuery::Kind::Pc           ? f.pc == query.start
                       : query.kind == FrameQuery::Kind::Tracepoint ? f.tracepoint == query.number
                       : query.kind == FrameQuery::Kind::InRange    ? inside
                                                                    : !inside;
    if (match) {
      return n;
    }
  }
  return std::nullopt;
}

Bytes Buffer::serialize() const {
  Bytes out;
  out.reserve(used_);
  for (const Frame& f : frames_) {
    Bytes one = f.serialize();
    out.insert(out.end(), one.begin(), one.end());
  }
  return out;
}

}  // namespace tracer::trace
