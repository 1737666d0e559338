// Agent expressions (tracer/agent): what GDB sends for `break ... if COND` with
// `set breakpoint condition-evaluation target`, run against a machine of registers and memory.
#include <catch2/catch.hpp>

#include <map>
#include <vector>

#include "tracer/agent/bytecode.hpp"

using tracer::agent::evaluate;
using tracer::agent::validate;
using Code = std::vector<std::uint8_t>;

namespace {

// Registers by GDB number; memory: a little-endian image at 0x1000.
struct FakeMachine : tracer::agent::Machine {
  std::map<int, std::uint64_t> regs;
  std::vector<std::uint8_t> memory = std::vector<std::uint8_t>(64, 0);
  int reads = 0;
  base::Result<std::uint64_t> reg(int regno) override {
    auto it = regs.find(regno);
    if (it == regs.end()) {
      return base::make_error(base::Errc::invalid, "no register");
    }
    return it->second;
  }
  base::Result<std::uint64_t> read(tracer::Addr addr, std::size_t len) override {
    ++reads;
    if (addr < 0x1000 || addr + len > 0x1000 + memory.size()) {
      return base::make_error(base::Errc::invalid, "unmapped");
    }
    std::uint64_t v = 0;
    for (std::size_t i = 0; i < len; ++i) {
      v |= std::uint64_t{memory[addr - 0x1000 + i]} << (8 * i);
    }
    return v;
  }
  void print(std::string_view text) override { printed += text; }
  std::string printed;
};

std::uint64_t run(const Code& code, FakeMachine& m) {
  auto v = evaluate(code, m);
  INFO((v ? std::string("ok") : v.error().message()));
  REQUIRE(v.ok());
  return *v;
}

std::string error_of(const Code& code, FakeMachine& m) {
  auto v = evaluate(code, m);
  REQUIRE_FALSE(v.ok());
  return v.error().message();
}

}  // namespace

TEST_CASE("agent expressions: what GDB compiles for `if i == 3` (a 32-bit local read off the frame)",
          "[agent]") {
  FakeMachine m;
  // reg 6 (rbp); const8 0x14; sub; ref32; ext 32; const8 3; equal; end
  m.regs[6] = 0x1020;
  m.memory[0x0c] = 3;  // i at rbp - 0x14 = 0x100c
  const Code cond = {0x26, 0x00, 0x06, 0x22, 0x14, 0x03, 0x19, 0x16, 0x20, 0x22, 0x03, 0x13, 0x27};
  REQUIRE(validate(cond).ok());
  CHECK(run(cond, m) == 1);
  m.memory[0x0c] = 4;
  CHECK(run(cond, m) == 0);
}

TEST_CASE("agent expressions: arithmetic, signedness, extension, stack shuffles, jumps", "[agent]") {
  FakeMachine m;
  CHECK(run({0x22, 0x07, 0x22, 0x02, 0x05, 0x27}, m) == 3);                    // 7 / 2
  CHECK(run({0x22, 0xf9, 0x16, 0x08, 0x22, 0x02, 0x05, 0x27}, m) == static_cast<std::uint64_t>(-3));  // -7 / 2
  CHECK(run({0x22, 0xf9, 0x16, 0x08, 0x22, 0x02, 0x07, 0x27}, m) == static_cast<std::uint64_t>(-1));  // -7 % 2
  CHECK(run({0x22, 0xff, 0x2a, 0x04, 0x27}, m) == 0x0f);                       // zero_ext 4
  CHECK(run({0x22, 0xff, 0x16, 0x40, 0x27}, m) == 0xff);                       // ext 64: no effect
  CHECK(run({0x22, 0x01, 0x22, 0x02, 0x14, 0x27}, m) == 1);                    // 1 < 2
  CHECK(run({0x22, 0xff, 0x16, 0x08, 0x22, 0x01, 0x15, 0x27}, m) == 0);        // (unsigned)-1 < 1
  CHECK(run({0x22, 0x01, 0x22, 0x02, 0x22, 0x03, 0x33, 0x27}, m) == 2);        // rot: 1 2 3 -> 3 1 2
  CHECK(run({0x22, 0x05, 0x22, 0x06, 0x32, 0x01, 0x27}, m) == 5);              // pick 1
  CHECK(run({0x22, 0x01, 0x22, 0x40, 0x09, 0x27}, m) == 0);                    // 1 << 64
  CHECK(run({0x25, 0x80, 0, 0, 0, 0, 0, 0, 0, 0x22, 0x3f, 0x0a, 0x27}, m) == ~0ull);  // sign shift
  // if_goto over a const: 1 -> jumps to offset 7 (const8 9).
  CHECK(run({0x22, 0x01, 0x20, 0x00, 0x07, 0x22, 0x05, 0x22, 0x09, 0x27}, m) == 9);
  CHECK(run({0x23, 0x12, 0x34, 0x27}, m) == 0x1234);                           // operands big-endian
}

TEST_CASE("agent expressions: faults end the run with the reason", "[agent]") {
  FakeMachine m;
  CHECK_THAT(error_of({0x22, 0x01, 0x22, 0x00, 0x05, 0x27}, m), Catch::Contains("division by zero at byte 4"));
  CHECK_THAT(error_of({0x22, 0x00, 0x17, 0x27}, m), Catch::Contains("cannot read 1 bytes at 0x0"));
  CHECK_THAT(error_of({0x26, 0x00, 0x63, 0x27}, m), Catch::Contains("register 99 unreadable"));
  CHECK_THAT(error_of({0x02, 0x27}, m), Catch::Contains("stack underflow"));
  // An endless loop: goto 0.
  CHECK_THAT(error_of({0x21, 0x00, 0x00, 0x27}, m), Catch::Contains("more than 100000 steps"));
  // Growing the stack without end: dup in a loop.
  CHECK_THAT(error_of({0x22, 0x01, 0x28, 0x21, 0x00, 0x02, 0x27}, m), Catch::Contains("stack overflow"));
  // INT64_MIN / -1 is no trap.
  CHECK(run({0x25, 0x80, 0, 0, 0, 0, 0, 0, 0, 0x22, 0xff, 0x16, 0x08, 0x05, 0x27}, m) == 0x8000000000000000ull);
}

TEST_CASE("agent expressions: malformed code is refused before it runs", "[agent]") {
  for (const Code& bad : std::vector<Code>{{}, {0x22}, {0x22, 0x01}, {0x1b, 0x27}, {0x01, 0x27}, {0x31, 0x27}, {0x2c, 0x00, 0x27},
                                           {0x21, 0x00, 0x01, 0x22, 0x01, 0x27}, {0x21, 0x00, 0x09, 0x27},
                                           Code(5000, 0x27)}) {
    INFO("code of " << bad.size() << " bytes");
    CHECK_FALSE(validate(bad).ok());
  }
  CHECK(validate(Code{0x27}).ok());
  FakeMachine m;
  CHECK_THAT(error_of({0x27}, m), Catch::Contains("stack underflow"));
}

TEST_CASE("agent expressions: trace ops and state variables are errors outside a collection", "[agent]") {
  FakeMachine m;
  // collect *(int*)0x1000: const16 0x1000, trace_quick 4, end.
  CHECK_THAT(error_of({0x23, 0x10, 0x00, 0x0d, 0x04, 0x27}, m), Catch::Contains("no trace frame is being collected"));
  // $tsv: getv 2, end.
  CHECK_THAT(error_of({0x2c, 0x00, 0x02, 0x27}, m), Catch::Contains("trace state variable 2"));
}

namespace {

// Records what the trace ops ask for.
struct CollectingMachine : FakeMachine {
  std::vector<std::pair<tracer::Addr, std::size_t>> collected;
  std::vector<std::pair<tracer::Addr, std::size_t>> strings;
  std::map<std::uint32_t, std::int64_t> variables{{2, 40}};
  std::vector<std::uint32_t> recorded;
  base::Result<void> collect(tracer::Addr addr, std::size_t len) override {
    collected.emplace_back(addr, len);
    return base::success();
  }
  base::Result<void> collect_string(tracer::Addr addr, std::size_t limit) override {
    strings.emplace_back(addr, limit);
    return base::success();
  }
  base::Result<std::int64_t> variable(std::uint32_t n) override {
    if (!variables.count(n)) {
      return base::make_error(base::Errc::invalid, "not defined");
    }
    return variables[n];
  }
  base::Result<void> set_variable(std::uint32_t n, std::int64_t v) override {
    variables[n] = v;
    return base::success();
  }
  base::Result<void> collect_variable(std::uint32_t n) override {
    recorded.push_back(n);
    return base::success();
  }
};

}  // namespace

TEST_CASE("agent expressions: the trace ops GDB compiles for collect and teval", "[agent]") {
  CollectingMachine m;
  // trace_quick 4 leaves the address: const16 0x1000, trace_quick 4, ref32, end.
  m.memory[0] = 7;
  CHECK(run({0x23, 0x10, 0x00, 0x0d, 0x04, 0x19, 0x27}, m) == 7);
  // trace16 0x120 too.
  CHECK(run({0x23, 0x10, 0x00, 0x30, 0x01, 0x20, 0x27}, m) == 0x1000);
  // trace takes the address and the size: const16 0x1008, const8 16, trace, const8 1, end.
  CHECK(run({0x23, 0x10, 0x08, 0x22, 0x10, 0x0c, 0x22, 0x01, 0x27}, m) == 1);
  // tracenz (collect a char * as a string, `collect/s`): address, limit.
  CHECK(run({0x23, 0x20, 0x00, 0x22, 0x40, 0x2f, 0x22, 0x00, 0x27}, m) == 0);
  CHECK(m.collected == std::vector<std::pair<tracer::Addr, std::size_t>>{{0x1000, 4}, {0x1000, 0x120}, {0x1008, 16}});
  CHECK(m.strings == std::vector<std::pair<tracer::Addr, std::size_t>>{{0x2000, 0x40}});
  // teval $v = $v + 2 (getv 2, const8 2, add, setv 2, pop), then collect $v (tracev 2).
  CHECK(tracer::agent::execute(Code{0x2c, 0x00, 0x02, 0x22, 0x02, 0x02, 0x2d, 0x00, 0x02, 0x29, 0x2e, 0x00, 0x02, 0x27}, m).ok());
  CHECK(m.variables[2] == 42);
  CHECK(m.recorded == std::vector<std::uint32_t>{2});
  // trace underflows like any op.
  CHECK_THAT(error_of({0x22, 0x01, 0x0c, 0x27}, m), Catch::Contains("stack underflow"));
}

TEST_CASE("agent usage: the registers and trace state variables an expression touches", "[agent][trace]") {
  using tracer::agent::usage;
  // reg 6 (rbp), const8 -20, add, const8 4, trace, end
  auto u = usage(Code{0x26, 0, 6, 0x22, 0xec, 0x02, 0x22, 4, 0x0c, 0x27});
  CHECK(u.highest_register == 6);
  CHECK_FALSE(u.state_variables);
  CHECK_FALSE(u.printf);
  // getv 2, const8 1, add, setv 2, end: $count = $count + 1
  CHECK(usage(Code{0x2c, 0, 2, 0x22, 1, 0x02, 0x2d, 0, 2, 0x27}).state_variables);
  CHECK(usage(Code{0x2e, 0, 3, 0x27}).state_variables);  // tracev 3
  CHECK(usage(Code{0x26, 0, 40, 0x27}).highest_register == 40);  // an xmm register
  CHECK(usage(Code{0x22, 1, 0x27}).highest_register == -1);
}
