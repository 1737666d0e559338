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

// Words at the addresses set up; anything else faults. Each access must be of `word` bytes
// (the code's word size); a read returns that many bytes of the stored value.
struct FakeMemory final : ax::BranchMemory {
  std::map<std::uint64_t, std::uint64_t> words;
  std::size_t word = 8;
  base::Result<std::uint64_t> read_word(std::uint64_t addr, std::size_t bytes) override {
    CHECK(bytes == word);
    auto it = words.find(addr);
    if (it == words.end()) {
      return base::make_error(base::Errc::system, "unmapped");
    }
    return bytes == 8 ? it->second : it->second & ((std::uint64_t{1} << (8 * bytes)) - 1);
  }
  base::Result<void> write_word(std::uint64_t addr, std::uint64_t value, std::size_t bytes) override {
    CHECK(bytes == word);
    if (words.count(addr) == 0) {
      return base::make_error(base::Errc::system, "unmapped");
    }
    words[addr] = value;
    return base::success();
  }
};

ax::BranchInstruction decode(std::vector<std::uint8_t> bytes, ax::Isa isa = ax::Isa::Amd64) {
  auto b = ax::decode_branch(bytes, isa);
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
    CHECK_FALSE(ax::decode_branch(bytes, ax::Isa::Amd64));
  }
}

TEST_CASE("decode_branch reads i386 code as i386 code", "[arch][emulate][i386]") {
  const auto i386 = ax::Isa::I386;
  CHECK(decode({0xe8, 0, 0, 0, 0}, i386).word_bytes == 4);
  CHECK(decode({0xe8, 0, 0, 0, 0}).word_bytes == 8);
  auto call_reg = decode({0xff, 0xd0}, i386);  // call *%eax
  CHECK(call_reg.target == ax::TargetKind::Register);
  CHECK(call_reg.reg == ax::kRax);
  // jmp *0x804a00c: the PLT's absolute GOT slot (RIP-relative in 64-bit code)
  auto plt = decode({0xff, 0x25, 0x0c, 0xa0, 0x04, 0x08}, i386);
  CHECK(plt.target == ax::TargetKind::Memory);
  CHECK(plt.mem.base == -1);
  CHECK(plt.mem.disp == 0x804a00c);
  CHECK(plt.mem.address_bits == 32);
  CHECK(decode({0xff, 0xa3, 0x0c, 0, 0, 0}, i386).mem.base == ax::kRbx);  // jmp *0xc(%ebx): PIC PLT
  CHECK(decode({0xe3, 0x05}, i386).counter_bits == 32);                  // jecxz
  CHECK(decode({0xe2, 0xfe}, i386).counter_bits == 32);                  // loop with ecx
  // 0x40-0x4f are inc/dec here, not REX: `41 ff d3` is no call.
  CHECK_FALSE(ax::decode_branch(std::vector<std::uint8_t>{0x41, 0xff, 0xd3}, i386));
  const std::vector<std::vector<std::uint8_t>> not_emulated = {
      {0x65, 0xff, 0x15, 0x10, 0, 0, 0},  // call *%gs:0x10 (the base is a descriptor's)
      {0xcd, 0x80},                       // int $0x80
      {0x0f, 0x34},                       // sysenter
      {0x67, 0xe3, 0x05},                 // jcxz: a 16-bit counter
      {0x67, 0xe2, 0xfe},                 // loop with cx
      {0x66, 0xc3},                       // retw
      {0xca, 0x04, 0x00},                 // lret $4
  };
  for (const auto& bytes : not_emulated) {
    CAPTURE(bytes);
    CHECK_FALSE(ax::decode_branch(bytes, i386));
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

TEST_CASE("emulate_branch in i386 code: 4-byte return addresses and slots, 32-bit wrap", "[arch][emulate][i386]") {
  const auto i386 = ax::Isa::I386;
  constexpr std::uint64_t kPc32 = 0x8049000;
  constexpr std::uint64_t kStack32 = 0xffffd000;
  FakeMemory mem;
  mem.word = 4;
  mem.words[kStack32 - 4] = 0;
  mem.words[kStack32] = 0xf7e01234ull | 0xdeadbeef00000000ull;  // the word above is not the return address's
  mem.words[0x804a00c] = 0xf7d05678;
  ax::Gprs g{};
  g[ax::kRip] = kPc32;
  g[ax::kRsp] = kStack32;
  g[ax::kEflags] = 0x202;

  SECTION("call rel32 pushes four bytes") {
    auto out = ax::emulate_branch(decode({0xe8, 0xfb, 0x0f, 0, 0}, i386), kPc32, g, mem);
    REQUIRE(out);
    CHECK(out->next == kPc32 + 0x1000);
    CHECK(g[ax::kRsp] == kStack32 - 4);
    CHECK(mem.words[kStack32 - 4] == kPc32 + 5);
  }
  SECTION("ret pops four bytes; ret imm16 releases more") {
    auto out = ax::emulate_branch(decode({0xc3}, i386), kPc32, g, mem);
    REQUIRE(out);
    CHECK(out->next == 0xf7e01234);
    CHECK(g[ax::kRip] == 0xf7e01234);
    CHECK(g[ax::kRsp] == kStack32 + 4);
    g[ax::kRsp] = kStack32;
    REQUIRE(ax::emulate_branch(decode({0xc2, 0x08, 0x00}, i386), kPc32, g, mem));
    CHECK(g[ax::kRsp] == kStack32 + 4 + 8);
  }
  SECTION("jmp through the PLT's GOT slot reads four bytes") {
    auto out = ax::emulate_branch(decode({0xff, 0x25, 0x0c, 0xa0, 0x04, 0x08}, i386), kPc32, g, mem);
    REQUIRE(out);
    CHECK(out->next == 0xf7d05678);
    CHECK(g[ax::kRsp] == kStack32);
  }
  SECTION("a relative target past 4 GiB wraps, as the CPU's eip does") {
    auto out = ax::emulate_branch(decode({0xe9, 0x00, 0x00, 0x00, 0x10}, i386), 0xf0000000, g, mem);  // jmp +0x10000000
    REQUIRE(out);
    CHECK(out->next == 0x00000005);
  }
  SECTION("loop counts ecx down, wrapping at 32 bits") {
    g[ax::kRcx] = 0;
    auto out = ax::emulate_branch(decode({0xe2, 0xfe}, i386), kPc32, g, mem);
    REQUIRE(out);
    CHECK(out->taken);
    CHECK(g[ax::kRcx] == 0xffffffff);
  }
  SECTION("a register target keeps its low 32 bits") {
    g[ax::kRax] = 0x1234567808049abcull;
    auto out = ax::emulate_branch(decode({0xff, 0xe0}, i386), kPc32, g, mem);  // jmp *%eax
    REQUIRE(out);
    CHECK(out->next == 0x08049abc);
  }
}
