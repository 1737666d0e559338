// Trace frames: what one tracepoint hit (or one of its while-stepping steps) collected, and
// the sized buffer that keeps them, linear (full: no more frames) or circular (the oldest go).
// Sizes are counted as gdbserver lays frames out in its buffer (and as `qTBuffer` sends them,
// GDB's trace file format): a 6-byte header (tracepoint number, 2 bytes; data size, 4), then
// blocks 'R' + the registers, 'M' + address (8) + length (2) + bytes, 'V' + number (4) +
// value (8). So `tstatus` counts as gdbserver's does, and a buffer of N frames' bytes holds N.
// Pure.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <utility>
#include <vector>

#include "tracer/types.hpp"

namespace tracer::trace {

inline constexpr std::uint64_t kDefaultBufferSize = 5 * 1024 * 1024;  // gdbserver's
inline constexpr std::size_t kFrameHeaderSize = 6;
inline constexpr std::size_t kMaxMemoryBlock = 0xffff;  // a block's length is 2 bytes

struct MemoryBlock {
  Addr address = 0;
  Bytes bytes;
};

struct Frame {
  std::uint32_t tracepoint = 0;
  Addr pc = 0;  // where the thread was (not in the buffer's layout: its registers say it)
  std::optional<Bytes> registers{};  // the `g` block of the thread, its pc the hit's
  std::vector<MemoryBlock> memory{};  // in collection order; may overlap
  std::vector<std::pair<std::uint32_t, std::int64_t>> variables{};  // (number, value)

  // Bytes it takes in the buffer, header included.
  std::size_t size() const;
  // The bytes of the first block that holds addr, from addr on, at most len; empty if none
  // does (GDB asks again for the rest, which another block may hold).
  Bytes read(Addr addr, std::size_t len) const;
  // The value collected last for state variable number.
  std::optional<std::int64_t> variable(std::uint32_t number) const;
  // In the buffer's layout, little-endian (what `qTBuffer` sends).
  Bytes serialize() const;
};

// Which frame to look at after the current one (QTFrame): its number, or the next one whose
// pc, or tracepoint, matches.
struct FrameQuery {
  enum class Kind { Number, Pc, Tracepoint, InRange, OutsideRange };
  Kind kind = Kind::Number;
  std::uint64_t number = 0;  // Number: the frame; Tracepoint: the tracepoint
  Addr start = 0;            // Pc: the pc; the ranges: [start, end]
  Addr end = 0;
};

class Buffer {
 public:
  explicit Buffer(std::uint64_t size = kDefaultBufferSize) : size_(size) {}

  std::uint64_t size() const { return size_; }
  std::uint64_t free() const { return size_ - used_; }
  bool circular() const { return circular_; }
  void set_circular(bool on) { circular_ = on; }
  // Empties it, with a new size.
  void reset(std::uint64_t size);
  void clear() { reset(size_); }

  // Frames kept now, and made since the last clear (those a circular buffer let go count).
  std::size_t count() const { return frames_.size(); }
  std::uint64_t created() const { return created_; }
  // Keeps frame, letting the oldest go if the buffer is circular; false if it does not fit
  // (the buffer is full).
  bool add(Frame frame);

  // Frame number n: frames are numbered from the oldest kept, 0 (as gdbserver numbers them).
  const Frame* find(std::uint64_t number) const {
    return number < frames_.size() ? &frames_[number] : nullptr;
  }
  // The number of the frame query selects: for a search, the first after `after` (or from
  // the first, if none) that matches.
  std::optional<std::uint64_t> next(const FrameQuery& query, std::optional<std::uint64_t> after) const;

  // All frames, serialized one after the other.
  Bytes serialize() const;

 private:
  std::uint64_t size_;
  bool circular_ = false;
  std::uint64_t used_ = 0;
  std::uint64_t created_ = 0;
  std::deque<Frame> frames_;
};

}  // namespace tracer::trace
