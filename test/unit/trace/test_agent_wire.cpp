// What the server and the in-process agent exchange (tracer/trace/agent_wire): tracepoints
// written for the agent, and the frames it leaves in its ring, wrapping at its end.
#include <catch2/catch.hpp>

#include <cstring>

#include "tracer/trace/agent_wire.hpp"

using namespace tracer;
using namespace tracer::trace;

namespace {

AgentRecord record(std::uint32_t index, Addr pc, std::size_t memory_bytes, bool registers) {
  AgentRecord rec{.index = index, .generation = 4, .pc = pc};
  if (registers) {
    for (std::size_t i = 0; i < kGprWords; ++i) {
      rec.gpr.push_back(i * 0x101);
    }
    rec.save_area = Bytes(515, 0x5a);
  }
  if (memory_bytes > 0) {
    rec.memory.push_back({pc + 0x1000, Bytes(memory_bytes, static_cast<std::uint8_t>(index))});
    rec.memory.push_back({pc + 0x2000, Bytes{1, 2, 3}});
  }
  return rec;
}

std::size_t size_of(const AgentRecord& rec) {
  std::vector<std::size_t> lengths;
  for (const auto& b : rec.memory) {
    lengths.push_back(b.bytes.size());
  }
  return record_size(!rec.gpr.empty(), rec.save_area.size(), lengths);
}

// Appends rec at head as the agent does: a skip record where the ring's end is too short.
void append(Bytes& ring, std::uint64_t& head, const AgentRecord& rec) {
  const std::size_t n = size_of(rec);
  const std::size_t to_end = ring.size() - head % ring.size();
  if (to_end < n) {
    const auto len = static_cast<std::uint32_t>(to_end);
    std::memcpy(ring.data() + head % ring.size(), &len, 4);
    std::memcpy(ring.data() + head % ring.size() + 4, &kRingSkip, 4);
    head += to_end;
  }
  write_record(rec, std::span<std::uint8_t>(ring.data() + head % ring.size(), n));
  head += n;
}

}  // namespace

TEST_CASE("agent wire: tracepoints written for the agent read back the same", "[trace]") {
  Tracepoint a{.number = 2, .address = 0x401000, .pass_count = 9, .condition = Bytes{0x22, 1, 0x27}};
  a.actions = {Action{.kind = Action::Kind::Registers},
               Action{.kind = Action::Kind::Memory, .base_register = 6, .offset = std::uint64_t(-20), .length = 4},
               Action{.kind = Action::Kind::Expression, .bytecode = Bytes{0x22, 4, 0x0d, 4, 0x27}}};
  Tracepoint b{.number = 3, .address = 0x402000};
  auto back = decode_agent_tracepoints(encode_agent_tracepoints({&a, &b}));
  REQUIRE(back);
  REQUIRE(back->size() == 2);
  const Tracepoint& x = (*back)[0];
  CHECK(x.number == 2);
  CHECK(x.address == 0x401000);
  CHECK(x.pass_count == 9);
  CHECK(x.condition == a.condition);
  REQUIRE(x.actions.size() == 3);
  CHECK(x.actions[1].kind == Action::Kind::Memory);
  CHECK(x.actions[1].base_register == 6);
  CHECK(x.actions[1].offset == std::uint64_t(-20));
  CHECK(x.actions[1].length == 4);
  CHECK(x.actions[2].bytecode == a.actions[2].bytecode);
  CHECK_FALSE((*back)[1].condition);
  CHECK((*back)[1].actions.empty());
  // Cut anywhere: an error, never a crash.
  const Bytes whole = encode_agent_tracepoints({&a, &b});
  for (std::size_t n = 0; n < whole.size(); ++n) {
    CHECK_FALSE(decode_agent_tracepoints(std::span<const std::uint8_t>(whole.data(), n)));
  }
}

TEST_CASE("agent wire: records in the ring, across its end, read back in order", "[trace]") {
  Bytes ring(2048);  // (records take half of it at most)
  std::uint64_t head = 0;
  std::uint64_t tail = 0;
  std::vector<AgentRecord> written;
  for (std::uint32_t i = 0; i < 12; ++i) {
    AgentRecord rec = record(i, 0x401000 + i, 13 * i, i % 4 == 1);
    const std::size_t to_end = ring.size() - head % ring.size();
    const std::size_t needed = size_of(rec) + (to_end < size_of(rec) ? to_end : 0);
    if (ring.size() - (head - tail) < needed) {
      auto taken = read_records(ring, tail, head);  // the server takes what is there
      REQUIRE(taken);
      for (const auto& r : *taken) {
        CHECK(r.index == written.front().index);
        written.erase(written.begin());
      }
      tail = head;
    }
    append(ring, head, rec);
    written.push_back(rec);
  }
  CHECK(head > ring.size());  // it wrapped
  auto rest = read_records(ring, tail, head);
  REQUIRE(rest);
  REQUIRE(rest->size() == written.size());
  for (std::size_t k = 0; k < rest->size(); ++k) {
    const AgentRecord& got = (*rest)[k];
    const AgentRecord& want = written[k];
    CHECK(got.index == want.index);
    CHECK(got.generation == 4);
    CHECK(got.pc == want.pc);
    CHECK(got.gpr == want.gpr);
    CHECK(got.save_area == want.save_area);
    REQUIRE(got.memory.size() == want.memory.size());
    for (std::size_t m = 0; m < got.memory.size(); ++m) {
      CHECK(got.memory[m].address == want.memory[m].address);
      CHECK(got.memory[m].bytes == want.memory[m].bytes);
    }
  }
}

TEST_CASE("agent wire: a ring that is not well formed is an error", "[trace]") {
  Bytes ring(256);
  std::uint64_t head = 0;
  append(ring, head, record(1, 0x1000, 8, false));
  CHECK(read_records(ring, 0, head));
  CHECK_FALSE(read_records(ring, 8, 0));          // head behind tail
  CHECK_FALSE(read_records(ring, 0, 300));        // more than the ring
  Bytes bad = ring;
  const std::uint32_t too_long = 512;
  std::memcpy(bad.data(), &too_long, 4);
  CHECK_FALSE(read_records(bad, 0, head));        // a record past the ring's end
  CHECK_FALSE(read_records(ring, 0, head - 8));   // a record cut by head
}
