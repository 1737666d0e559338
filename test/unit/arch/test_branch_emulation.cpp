// Branch emulation on hand-made registers and memory: each instruction kind, every jcc
// condition on every combination of the flags it reads, and what is left to the CPU.
#include <catch2/catch.hpp>

#include <cstdint>
#include <map>
#include <vector>

#include "arch/x86/branch_emulation.hpp"

namespace ax = arch::x86;
using ax::BranchKind;
using ax::Condition;

namespace {

// Words at 8-byte addresses; anything else faults.
struct FakeMemory final : ax::BranchMemory {
  std::map<std::uint64_t, std::uint64_t> words;
  base::Result<std::uint64_t> read_u64(std::uint64_t addr) override {
    auto it = words.find(addr);
    if (it == words.end()) {
      return base::make_error(base::Errc::system, "unmapped");
    }
    return it->second;
  }
  base::Result<void> write_u64(std::uint64_t addr, std::uint64_t value) override {
    if (words.count(addr) == 0) {
      return base::make_error(base::Errc::system, "unmapped");
    }
    words[addr] = value;
    return base::success();
  }
};

ax::BranchInstruction decode(std::vector<std::uint8_t> bytes) {
  auto b = ax::decode_branch(bytes);
  REQUIRE(b);
  return *b;
}

constexpr std::uint64_t kPc = 0x401000;
constexpr std::uint64_t kStack = 0x7ffff000;

ax::Gprs regs() {
  ax::Gprs g{};
  g[ax::kRip] = kPc;
  g[ax::kRsp] = kStack;
  g[ax::kEflags] = 0x202;
  return g;
}

}  // namespace

TEST_CASE("decode_branch: kinds, targets and what is left to the CPU", "[arch][emulate]") {
  auto jcc = decode({0x0f, 0x8c, 0x10, 0x00, 0x00, 0x00});  // jl rel32
  CHECK(jcc.kind == BranchKind::Jcc);
  CHECK(jcc.cond == Condition::L);
  CHECK(jcc.length == 6);
  CHECK(jcc.rel == 0x10);
  CHECK(decode({0x75, 0xfe}).rel == -2);  // jne .
  CHECK(decode({0xe3, 0x05}).kind == BranchKind::Jcxz);
  CHECK(decode({0xe3, 0x05}).counter_bits == 64);
  CHECK(decode({0x67, 0xe3, 0x05}).counter_bits == 32);  // jecxz
  CHECK(decode({0xe2, 0xfe}).kind == BranchKind::Loop);
  CHECK(decode({0xe1, 0xfe}).kind == BranchKind::Loope);
  CHECK(decode({0xe0, 0xfe}).kind == BranchKind::Loopne);
  auto call_reg = decode({0x41, 0xff, 0xd3});  // call *%r11
  CHECK(call_reg.kind == BranchKind::Call);
  CHECK(call_reg.target == ax::TargetKind::Register);
  CHECK(call_reg.reg == ax::kR11);
  auto jmp_table = decode({0xff, 0x24, 0xc5, 0x00, 0x20, 0x40, 0x00});  // jmp *0x402000(,%rax,8)
  CHECK(jmp_table.target == ax::TargetKind::Memory);
  CHECK(jmp_table.mem.base == -1);
  CHECK(jmp_table.mem.index == ax::kRax);
  CHECK(jmp_table.mem.scale == 8);
  CHECK(jmp_table.mem.disp == 0x402000);
  CHECK(decode({0xff, 0x25, 0x10, 0, 0, 0}).mem.base == ax::kRip);  // jmp *0x10(%rip)
  CHECK(decode({0x64, 0xff, 0x14, 0x25, 0x28, 0, 0, 0}).mem.segment_base == ax::kFsBase);  // call *%fs:0x28
  CHECK(decode({0xc2, 0x10, 0x00}).pop == 16);
  CHECK(decode({0xf3, 0xc3}).kind == BranchKind::Ret);  // rep ret
  CHECK(decode({0x3e, 0xff, 0xe0}).kind == BranchKind::Jmp);  // notrack jmp *%rax

  const std::vector<std::vector<std::uint8_t>> not_emulated = {
      {0xff, 0x2c, 0x24},        // ljmp *(%rsp): far
      {0xcb},                    // lret
      {0x48, 0xcf},              // iretq
      {0x0f, 0x05},              // syscall
      {0x66, 0xc3},              // retw: 16-bit operand size
      {0x67, 0xe2, 0xfe},        // loop with ecx
      {0x90},                    // nop
      {0xff, 0xff},              // invalid
      {},                        // nothing
  };
  for (const auto& bytes : not_emulated) {
    CAPTURE(bytes);
    CHECK_FALSE(ax::decode_branch(bytes));
  }
}

TEST_CASE("condition_holds: every jcc on every combination of CF PF ZF SF OF", "[arch][emulate]") {
  for (unsigned bits = 0; bits < 32; ++bits) {
    const bool cf = bits & 1, pf = bits & 2, zf = bits & 4, sf = bits & 8, of = bits & 16;
    const std::uint64_t flags = 0x202 | (cf ? 1u : 0u) | (pf ? 4u : 0u) | (zf ? 0x40u : 0u) |
                                (sf ? 0x80u : 0u) | (of ? 0x800u : 0u);
    CAPTURE(cf, pf, zf, sf, of);
    // The architectural definitions, each tested through the decoded jcc byte 0x70 + n.
    const bool want[16] = {of, !of, cf, !cf, zf, !zf, cf || zf, !cf && !zf,
                           sf, !sf, pf, !pf, sf != of, sf == of, zf || sf != of, !zf && sf == of};
    for (std::uint8_t n = 0; n < 16; ++n) {
      auto b = decode({static_cast<std::uint8_t>(0x70 + n), 0x10});
      REQUIRE(b.cond == static_cast<Condition>(n));
      CHECK(ax::condition_holds(b.cond, flags) == want[n]);
      FakeMemory mem;
      auto g = regs();
      g[ax::kEflags] = flags;
      auto out = ax::emulate_branch(b, kPc, g, mem);
      REQUIRE(out);
      CHECK(out->taken == want[n]);
      CHECK(g[ax::kRip] == (want[n] ? kPc + 2 + 0x10 : kPc + 2));
      CHECK(g[ax::kRsp] == kStack);
    }
  }
}

TEST_CASE("emulate_branch: calls push, rets pop, indirect targets are read", "[arch][emulate]") {
  FakeMemory mem;
  mem.words[kStack - 8] = 0;
  mem.words[kStack] = 0x405000;
  mem.words[0x402010] = 0x406000;  // a jump table slot
  mem.words[kPc + 6 + 0x100] = 0x407000;  // a GOT slot, RIP-relative
  mem.words[0x7f0000000028] = 0x408000;   // fs:0x28
  auto g = regs();

  SECTION("call rel32 pushes the return address") {
    auto out = ax::emulate_branch(decode({0xe8, 0xfb, 0x0f, 0, 0}), kPc, g, mem);  // call kPc+5+0xffb
    REQUIRE(out);
    CHECK(out->taken);
    CHECK(out->next == kPc + 0x1000);
    CHECK(g[ax::kRip] == kPc + 0x1000);
    CHECK(g[ax::kRsp] == kStack - 8);
    CHECK(mem.words[kStack - 8] == kPc + 5);
  }
  SECTION("ret and ret imm16") {
    auto out = ax::emulate_branch(decode({0xc3}), kPc, g, mem);
    REQUIRE(out);
    CHECK(out->next == 0x405000);
    CHECK(g[ax::kRsp] == kStack + 8);
    g = regs();
    REQUIRE(ax::emulate_branch(decode({0xc2, 0x10, 0x00}), kPc, g, mem));
    CHECK(g[ax::kRsp] == kStack + 8 + 16);
  }
  SECTION("jmp through a table with base, index and scale") {
    g[ax::kRbx] = 0x402000;
    g[ax::kRcx] = 2;
    auto out = ax::emulate_branch(decode({0xff, 0x24, 0xcb}), kPc, g, mem);  // jmp *(%rbx,%rcx,8)
    REQUIRE(out);
    CHECK(out->next == 0x406000);
    CHECK(g[ax::kRsp] == kStack);
  }
  SECTION("call through a RIP-relative slot, the PLT's way") {
    auto out = ax::emulate_branch(decode({0xff, 0x15, 0x00, 0x01, 0, 0}), kPc, g, mem);  // call *0x100(%rip)
    REQUIRE(out);
    CHECK(out->next == 0x407000);
    CHECK(mem.words[kStack - 8] == kPc + 6);
  }
  SECTION("call through fs:") {
    g[ax::kFsBase] = 0x7f0000000000;
    auto out = ax::emulate_branch(decode({0x64, 0xff, 0x14, 0x25, 0x28, 0, 0, 0}), kPc, g, mem);
    REQUIRE(out);
    CHECK(out->next == 0x408000);
    CHECK(mem.words[kStack - 8] == kPc + 8);
  }
  SECTION("call through a register reads it before the push") {
    g[ax::kRsp] = kStack;
    auto out = ax::emulate_branch(decode({0xff, 0xd4}), kPc, g, mem);  // call *%rsp
    REQUIRE(out);
    CHECK(out->next == kStack);
  }
  SECTION("call *(%rsp) reads the slot at the old rsp") {
    auto out = ax::emulate_branch(decode({0xff, 0x14, 0x24}), kPc, g, mem);
    REQUIRE(out);
    CHECK(out->next == 0x405000);
    CHECK(mem.words[kStack - 8] == kPc + 3);
  }
  SECTION("loop, loope, loopne and jrcxz on the counter") {
    g[ax::kRcx] = 2;
    auto out = ax::emulate_branch(decode({0xe2, 0xfe}), kPc, g, mem);
    REQUIRE(out);
    CHECK(out->taken);
    CHECK(g[ax::kRcx] == 1);
    CHECK(g[ax::kRip] == kPc);
    out = ax::emulate_branch(decode({0xe2, 0xfe}), kPc, g, mem);
    CHECK_FALSE(out->taken);
    CHECK(g[ax::kRcx] == 0);
    CHECK(g[ax::kRip] == kPc + 2);
    g[ax::kRcx] = 5;
    g[ax::kEflags] = 0x202;  // ZF clear
    CHECK_FALSE(ax::emulate_branch(decode({0xe1, 0xfe}), kPc, g, mem)->taken);  // loope
    CHECK(ax::emulate_branch(decode({0xe0, 0xfe}), kPc, g, mem)->taken);        // loopne
    g[ax::kRcx] = 0x100000000;
    CHECK_FALSE(ax::emulate_branch(decode({0xe3, 0x05}), kPc, g, mem)->taken);   // jrcxz
    CHECK(ax::emulate_branch(decode({0x67, 0xe3, 0x05}), kPc, g, mem)->taken);   // jecxz
  }
  SECTION("an unreadable target or stack changes nothing") {
    g[ax::kRax] = 0xdead0000;
    const auto before = g;
    CHECK_FALSE(ax::emulate_branch(decode({0xff, 0x20}), kPc, g, mem));  // jmp *(%rax)
    g[ax::kRsp] = 0x1000;
    CHECK_FALSE(ax::emulate_branch(decode({0xc3}), kPc, g, mem));
    CHECK_FALSE(ax::emulate_branch(decode({0xe8, 0, 0, 0, 0}), kPc, g, mem));
    g[ax::kRsp] = before[ax::kRsp];
    CHECK(g == before);
  }
}
