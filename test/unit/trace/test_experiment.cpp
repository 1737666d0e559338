// A trace experiment (tracer/trace/experiment) against a fake stopped thread: definitions,
// a run, what hits collect, conditions, pass counts, a full buffer, state variables and
// while-stepping, as gdbserver does them.
#include <catch2/catch.hpp>

#include <map>

#include "tracer/trace/experiment.hpp"

using tracer::Addr;
using tracer::Bytes;
using namespace tracer::trace;

namespace {

// rbp (GDB's 6) is 0x1010; memory 0x1000..0x103f holds 0, 1, 2, ...; registers are 16 bytes.
struct FakeThread : Thread {
  std::map<int, std::uint64_t> regs{{6, 0x1010}};
  Bytes memory = [] {
    Bytes m(64);
    for (std::size_t i = 0; i < m.size(); ++i) {
      m[i] = static_cast<std::uint8_t>(i);
    }
    return m;
  }();
  base::Result<std::uint64_t> reg(int regno) override {
    if (!regs.count(regno)) {
      return base::make_error(base::Errc::invalid, "no register");
    }
    return regs[regno];
  }
  base::Result<std::uint64_t> read(Addr addr, std::size_t len) override {
    auto bytes = read_memory(addr, len);
    if (!bytes || bytes->size() != len) {
      return base::make_error(base::Errc::invalid, "unmapped");
    }
    std::uint64_t v = 0;
    for (std::size_t i = 0; i < len; ++i) {
      v |= std::uint64_t{(*bytes)[i]} << (8 * i);
    }
    return v;
  }
  void print(std::string_view) override {}
  base::Result<Bytes> registers() override { return Bytes(16, 0xab); }
  base::Result<Bytes> read_memory(Addr addr, std::size_t len) override {
    if (addr < 0x1000 || addr >= 0x1000 + memory.size()) {
      return base::make_error(base::Errc::invalid, "unmapped");
    }
    const std::size_t from = addr - 0x1000;
    const std::size_t n = std::min(len, memory.size() - from);
    return Bytes(memory.begin() + static_cast<std::ptrdiff_t>(from),
                 memory.begin() + static_cast<std::ptrdiff_t>(from + n));
  }
};

Action registers() { return {.kind = Action::Kind::Registers, .text = "R ffffffffff"}; }
Action memory(int basereg, std::uint64_t offset, std::uint64_t len) {
  return {.kind = Action::Kind::Memory, .base_register = basereg, .offset = offset, .length = len};
}
Action expression(Bytes code) { return {.kind = Action::Kind::Expression, .bytecode = std::move(code)}; }

}  // namespace

TEST_CASE("trace experiment: a hit collects registers and memory, and the program goes on", "[trace]") {
  Experiment e;
  REQUIRE(e.define({.number = 1, .address = 0x400000, .actions = {registers(), memory(6, -8ull, 4), memory(-1, 0x1030, 2)}}));
  CHECK_FALSE(e.define({.number = 1, .address = 0x400000}));  // defined twice
  CHECK(e.sites().empty());  // not running
  e.start(100);
  CHECK(e.sites() == std::vector<Addr>{0x400000});
  FakeThread t;
  HitOutcome out = e.hit(0x400000, t, 200);
  CHECK_FALSE(out.stop_run);
  CHECK(out.steps == 0);
  REQUIRE(e.buffer().count() == 1);
  const Frame& f = *e.buffer().find(0);
  CHECK(f.tracepoint == 1);
  CHECK(f.pc == 0x400000);
  CHECK(f.registers == Bytes(16, 0xab));
  CHECK(f.read(0x1008, 4) == Bytes{8, 9, 10, 11});
  CHECK(f.read(0x1030, 8) == Bytes{0x30, 0x31});
  CHECK(e.tracepoints()[0].hits == 1);
  CHECK(e.tracepoints()[0].frame_bytes == f.size());
  // Another address hits nothing.
  e.hit(0x400001, t, 300);
  CHECK(e.buffer().count() == 1);
  e.stop(StopReason::Requested, 400);
  CHECK_FALSE(e.running());
  CHECK(e.stop_reason() == StopReason::Requested);
  CHECK(e.stop_time() == 400);
  CHECK(e.sites().empty());
}

TEST_CASE("trace experiment: unreadable memory is left out, not invented", "[trace]") {
  Experiment e;
  REQUIRE(e.define({.number = 1, .address = 0x10, .actions = {memory(-1, 0x9000, 8), memory(-1, 0x1038, 16)}}));
  e.start(0);
  FakeThread t;
  e.hit(0x10, t, 0);
  const Frame& f = *e.buffer().find(0);
  REQUIRE(f.memory.size() == 1);  // 0x9000 is not mapped; 0x1038 has 8 bytes before the end
  CHECK(f.memory[0].bytes.size() == 8);
}

TEST_CASE("trace experiment: a condition decides, and a faulting one stops the run with its error", "[trace]") {
  Experiment e;
  // if *(char*)(rbp + 1) == 0x11: reg 6, const8 1, add, ref8, const8 0x11, equal, end.
  const Bytes cond{0x26, 0x00, 0x06, 0x22, 0x01, 0x02, 0x17, 0x22, 0x11, 0x13, 0x27};
  REQUIRE(e.define({.number = 1, .address = 0x10, .condition = cond, .actions = {registers()}}));
  e.start(0);
  FakeThread t;
  e.hit(0x10, t, 0);
  CHECK(e.buffer().count() == 1);
  t.regs[6] = 0x1020;
  e.hit(0x10, t, 0);
  CHECK(e.buffer().count() == 1);
  CHECK(e.tracepoints()[0].hits == 1);
  t.regs[6] = 0x8000;  // unreadable
  CHECK(e.hit(0x10, t, 5).stop_run);
  CHECK(e.stop_reason() == StopReason::Error);
  CHECK(e.stopping_tracepoint() == 1);
  CHECK_THAT(e.error_text(), Catch::Contains("cannot read"));
  // A malformed condition is refused when defined.
  CHECK_FALSE(e.define({.number = 2, .address = 0x20, .condition = Bytes{0x01}}));
}

TEST_CASE("trace experiment: the pass count ends the run after that many collecting hits", "[trace]") {
  Experiment e;
  REQUIRE(e.define({.number = 4, .address = 0x10, .pass_count = 3, .actions = {registers()}}));
  e.start(0);
  FakeThread t;
  CHECK_FALSE(e.hit(0x10, t, 0).stop_run);
  CHECK_FALSE(e.hit(0x10, t, 0).stop_run);
  CHECK(e.hit(0x10, t, 7).stop_run);
  CHECK(e.stop_reason() == StopReason::PassCount);
  CHECK(e.stopping_tracepoint() == 4);
  CHECK(e.buffer().count() == 3);
  // Not running: later hits collect nothing.
  e.hit(0x10, t, 8);
  CHECK(e.buffer().count() == 3);
  // A new run starts from zero.
  e.start(9);
  CHECK(e.tracepoints()[0].hits == 0);
  CHECK(e.buffer().count() == 0);
}

TEST_CASE("trace experiment: a full linear buffer ends the run", "[trace]") {
  Experiment e;
  REQUIRE(e.define({.number = 1, .address = 0x10, .actions = {registers()}}));
  e.buffer().reset(2 * (6 + 17) + 6);
  e.start(0);
  FakeThread t;
  CHECK_FALSE(e.hit(0x10, t, 0).stop_run);
  CHECK_FALSE(e.hit(0x10, t, 0).stop_run);
  CHECK(e.hit(0x10, t, 0).stop_run);
  CHECK(e.stop_reason() == StopReason::BufferFull);
  CHECK(e.buffer().count() == 2);
}

TEST_CASE("trace experiment: state variables start at their initial value and frames record them", "[trace]") {
  Experiment e;
  e.define_variable({.number = 1, .name = "trace_timestamp", .builtin = true});
  e.define_variable({.number = 2, .name = "count", .initial_value = 10});
  CHECK_FALSE(e.variable_value(2).has_value());  // before any run: unknown, as gdbserver
  // teval $count = $count + 1; collect $count; collect $trace_timestamp.
  const Bytes teval{0x2c, 0x00, 0x02, 0x22, 0x01, 0x02, 0x2d, 0x00, 0x02, 0x29, 0x27};
  const Bytes collect_count{0x2e, 0x00, 0x02, 0x27};
  const Bytes collect_time{0x2e, 0x00, 0x01, 0x27};
  REQUIRE(e.define({.number = 1, .address = 0x10, .actions = {expression(teval), expression(collect_count), expression(collect_time)}}));
  e.start(0);
  FakeThread t;
  e.hit(0x10, t, 1234);
  e.hit(0x10, t, 1300);
  CHECK(e.variable_value(2) == 12);
  CHECK(e.buffer().find(0)->variable(2) == 11);
  CHECK(e.buffer().find(1)->variable(2) == 12);
  CHECK(e.buffer().find(1)->variable(1) == 1300);
  // An undefined variable is an error that stops the run.
  REQUIRE(e.define({.number = 2, .address = 0x20, .actions = {expression({0x2e, 0x00, 0x09, 0x27})}}));
  CHECK(e.hit(0x20, t, 0).stop_run);
  CHECK(e.stop_reason() == StopReason::Error);
  e.start(0);
  CHECK(e.variable_value(2) == 10);
  // QTinit keeps the target's own variable and forgets GDB's.
  e.clear();
  REQUIRE(e.variables().size() == 1);
  CHECK(e.variables().at(1).name == "trace_timestamp");
}

TEST_CASE("trace experiment: while-stepping asks for steps, each collected, the pass count checked after the last",
          "[trace]") {
  Experiment e;
  REQUIRE(e.define({.number = 3, .address = 0x10, .step_count = 2, .pass_count = 1, .actions = {registers()},
                    .step_actions = {memory(-1, 0x1000, 1)}}));
  e.start(0);
  FakeThread t;
  HitOutcome out = e.hit(0x10, t, 0);
  CHECK_FALSE(out.stop_run);
  CHECK(out.stepping_tracepoint == 3);
  CHECK(out.steps == 2);
  CHECK_FALSE(e.step(3, 0x10, 1, 0x12, t, 0));
  CHECK(e.step(3, 0x10, 2, 0x15, t, 0));
  CHECK(e.stop_reason() == StopReason::PassCount);
  REQUIRE(e.buffer().count() == 3);
  CHECK(e.buffer().find(2)->pc == 0x15);
  CHECK_FALSE(e.buffer().find(2)->registers.has_value());
  CHECK(e.buffer().find(2)->read(0x1000, 1) == Bytes{0});
}

TEST_CASE("trace experiment: disabled tracepoints neither collect nor get an int3", "[trace]") {
  Experiment e;
  REQUIRE(e.define({.number = 1, .address = 0x10, .enabled = false, .actions = {registers()}}));
  REQUIRE(e.define({.number = 2, .address = 0x20, .actions = {registers()}}));
  REQUIRE(e.define({.number = 3, .address = 0x20, .actions = {registers()}}));
  e.start(0);
  CHECK(e.sites() == std::vector<Addr>{0x20});
  FakeThread t;
  e.hit(0x10, t, 0);
  CHECK(e.buffer().count() == 0);
  e.hit(0x20, t, 0);
  CHECK(e.buffer().count() == 2);  // both tracepoints at the address
  e.find(1, 0x10)->enabled = true;
  CHECK(e.sites() == std::vector<Addr>{0x10, 0x20});
  e.clear();
  CHECK(e.tracepoints().empty());
  CHECK_FALSE(e.running());
}

TEST_CASE("trace experiment: actions are added all or none, each expression checked", "[trace]") {
  Experiment e;
  REQUIRE(e.define({.number = 1, .address = 0x10}));
  Tracepoint& tp = *e.find(1, 0x10);
  CHECK_FALSE(e.add_actions(tp, {registers(), expression({0x01})}, false));  // a float op: refused
  CHECK(tp.actions.empty());
  REQUIRE(e.add_actions(tp, {registers(), expression({0x2e, 0x00, 0x01, 0x27})}, false));
  REQUIRE(e.add_actions(tp, {memory(-1, 0x1000, 1)}, true));
  CHECK(tp.actions.size() == 2);
  CHECK(tp.step_actions.size() == 1);
}
