// Trace frames and their buffer (tracer/trace/frames): sizes as gdbserver counts them, reads
// from a frame's blocks, a linear buffer that fills, a circular one that lets the oldest go,
// and the searches of QTFrame.
#include <catch2/catch.hpp>

#include "tracer/trace/frames.hpp"

using tracer::Bytes;
using tracer::trace::Buffer;
using tracer::trace::Frame;
using tracer::trace::FrameQuery;

namespace {

Frame frame_at(std::uint32_t tracepoint, tracer::Addr pc) {
  Frame f{.tracepoint = tracepoint, .pc = pc};
  f.memory.push_back({0x1000, Bytes{1, 2, 3, 4}});
  return f;
}

}  // namespace

TEST_CASE("trace frames: size and serialized layout are gdbserver's", "[trace]") {
  Frame f{.tracepoint = 2, .pc = 0x401000};
  f.registers = Bytes(16, 0xaa);
  f.memory.push_back({0x1122334455667788ull, Bytes{9, 8}});
  f.variables.emplace_back(3, -1);
  // header 6, R 1+16, M 1+8+2+2, V 1+4+8.
  CHECK(f.size() == 6 + 17 + 13 + 13);
  const Bytes out = f.serialize();
  REQUIRE(out.size() == f.size());
  CHECK(out[0] == 2);
  CHECK(out[1] == 0);
  CHECK(out[2] == f.size() - 6);
  CHECK(out[6] == 'R');
  CHECK(out[23] == 'M');
  CHECK(out[24] == 0x88);
  CHECK(out[31] == 0x11);
  CHECK(out[32] == 2);  // the length, 2 bytes
  CHECK(out[34] == 9);
  CHECK(out[36] == 'V');
  CHECK(out[37] == 3);
  CHECK(out[41] == 0xff);
  CHECK(out[48] == 0xff);
}

TEST_CASE("trace frames: memory and variables read back from the blocks", "[trace]") {
  Frame f;
  f.memory.push_back({0x1000, Bytes{1, 2, 3, 4}});
  f.memory.push_back({0x2000, Bytes{5, 6}});
  CHECK(f.read(0x1001, 2) == Bytes{2, 3});
  CHECK(f.read(0x1002, 10) == Bytes{3, 4});  // the rest is asked again
  CHECK(f.read(0x2001, 1) == Bytes{6});
  CHECK(f.read(0x1004, 1).empty());
  CHECK(f.read(0xfff, 4).empty());  // the first byte is not there
  f.variables.emplace_back(1, 5);
  f.variables.emplace_back(1, 6);
  CHECK(f.variable(1) == 6);
  CHECK_FALSE(f.variable(2).has_value());
}

TEST_CASE("trace buffer: a linear buffer of four frames and ten bytes holds four", "[trace]") {
  const std::size_t frame = frame_at(1, 0).size();
  Buffer b(4 * frame + 10);
  for (int i = 0; i < 4; ++i) {
    CHECK(b.add(frame_at(1, 0x400000 + i)));
  }
  CHECK(b.free() == 10);
  CHECK_FALSE(b.add(frame_at(1, 0x400004)));
  CHECK(b.count() == 4);
  CHECK(b.created() == 4);
  CHECK(b.find(0)->pc == 0x400000);
}

TEST_CASE("trace buffer: a circular buffer keeps the newest, numbered from the oldest kept", "[trace]") {
  const std::size_t frame = frame_at(1, 0).size();
  Buffer b(4 * frame + 10);
  b.set_circular(true);
  for (int i = 0; i < 10; ++i) {
    CHECK(b.add(frame_at(1, 0x400000 + i)));
  }
  CHECK(b.count() == 4);
  CHECK(b.created() == 10);
  CHECK(b.find(0)->pc == 0x400006);
  CHECK(b.find(3)->pc == 0x400009);
  CHECK(b.find(4) == nullptr);
  // A frame larger than the whole buffer never fits.
  Frame huge = frame_at(1, 0);
  huge.memory.push_back({0x5000, Bytes(5 * frame, 0)});
  CHECK_FALSE(b.add(huge));
}

TEST_CASE("trace buffer: QTFrame's searches start after the current frame", "[trace]") {
  Buffer b;
  b.add(frame_at(1, 0x10));
  b.add(frame_at(2, 0x20));
  b.add(frame_at(1, 0x30));
  b.add(frame_at(2, 0x20));
  using K = FrameQuery::Kind;
  CHECK(b.next({.kind = K::Number, .number = 2}, std::nullopt) == 2u);
  CHECK_FALSE(b.next({.kind = K::Number, .number = 4}, std::nullopt).has_value());
  CHECK(b.next({.kind = K::Pc, .start = 0x20}, std::nullopt) == 1u);
  CHECK(b.next({.kind = K::Pc, .start = 0x20}, 1) == 3u);
  CHECK_FALSE(b.next({.kind = K::Pc, .start = 0x20}, 3).has_value());
  CHECK(b.next({.kind = K::Tracepoint, .number = 1}, 0) == 2u);
  CHECK(b.next({.kind = K::InRange, .start = 0x25, .end = 0x30}, std::nullopt) == 2u);
  CHECK(b.next({.kind = K::OutsideRange, .start = 0x10, .end = 0x20}, std::nullopt) == 2u);
  CHECK(b.serialize().size() == 4 * frame_at(1, 0).size());
}
