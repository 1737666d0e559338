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
  for (const Code& bad : std::vector<Code>{{}, {0x22}, {0x22, 0x01}, {0x0c, 0x27}, {0x01, 0x27}, {0x2c, 0x00, 0x01, 0x27},
                                           {0x21, 0x00, 0x01, 0x22, 0x01, 0x27}, {0x21, 0x00, 0x09, 0x27},
                                           Code(5000, 0x27)}) {
    INFO("code of " << bad.size() << " bytes");
    CHECK_FALSE(validate(bad).ok());
  }
  CHECK(validate(Code{0x27}).ok());
  FakeMachine m;
  CHECK_THAT(error_of({0x27}, m), Catch::Contains("stack underflow"));
}
