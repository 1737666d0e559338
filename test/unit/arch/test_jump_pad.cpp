// Fast tracepoints' jump pads (arch/x86/jump_pad): which instructions a jump may replace, and
// pads that run for real here: code in a page of this process gets the jump, is called, and
// the collector sees the registers it was called with, then the moved instruction does what it
// did, registers and flags as they were.
#include <catch2/catch.hpp>

#include <cpuid.h>
#include <sys/mman.h>

#include <cstring>
#include <vector>

#include "arch/x86/jump_pad.hpp"

namespace ax = arch::x86;
using Code = std::vector<std::uint8_t>;

namespace {

constexpr std::uint64_t kAt = 0x555555555150;

std::optional<ax::JumpPad> pad_for(const Code& code, std::uint64_t pad = kAt + 0x100000) {
  return ax::amd64_jump_pad({.tracepoint = kAt, .code = code, .pad = pad, .index = 3, .collector = 0x7f0000001000});
}

// What the collector saw.
struct Seen {
  int calls = 0;
  std::uint64_t index = 0, address = 0, rdi = 0, rsi = 0, rflags = 0, rsp = 0;
  std::uint8_t mxcsr_byte = 0;
};
Seen seen;

extern "C" void test_collector(std::uint64_t index, const std::uint64_t* saved, const std::uint8_t* area,
                               std::uint64_t address) {
  ++seen.calls;
  seen.index = index;
  seen.address = address;
  seen.rdi = saved[14];
  seen.rsi = saved[13];
  seen.rflags = saved[15];
  seen.rsp = reinterpret_cast<std::uint64_t>(saved + ax::kSavedWords) + ax::kRedZone;
  seen.mxcsr_byte = area[24];  // (FXSAVE/XSAVE legacy area: MXCSR at 24)
  // What a collector may do to registers the program's code expects kept: all restored.
  asm volatile("xorps %%xmm0, %%xmm0\n\txorps %%xmm1, %%xmm1" ::: "xmm0", "xmm1");
}

// Two pages near each other: code (the "program"), then pads.
struct Pages {
  Pages() {
    base = static_cast<std::uint8_t*>(
        mmap(nullptr, 2 * 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  }
  ~Pages() { munmap(base, 2 * 4096); }
  std::uint8_t* code() const { return base; }
  std::uint8_t* pads() const { return base + 4096; }
  std::uint8_t* base;
};

std::uint32_t xsave_area(std::uint64_t& mask) {
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (__get_cpuid_max(0, nullptr) < 0xd) {
    return 0;
  }
  __cpuid_count(1, 0, a, b, c, d);
  if ((c & (1u << 27)) == 0) {
    return 0;
  }
  std::uint32_t lo = 0, hi = 0;
  asm volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  mask = ((std::uint64_t{hi} << 32) | lo) & 0x2e7;
  __cpuid_count(0xd, 0, a, b, c, d);
  return b;
}

// Installs a jump at code[0] (bytes `program`) to a pad, and calls code(rdi, rsi).
std::uint64_t run_through_pad(const Code& program, std::uint32_t save_area, std::uint64_t mask, double& xmm_out) {
  Pages pages;
  std::memcpy(pages.code(), program.data(), program.size());
  const auto at = reinterpret_cast<std::uint64_t>(pages.code());
  auto pad = ax::amd64_jump_pad({.tracepoint = at,
                                 .code = std::span<const std::uint8_t>(pages.code(), 16),
                                 .pad = reinterpret_cast<std::uint64_t>(pages.pads()),
                                 .index = 7,
                                 .collector = reinterpret_cast<std::uint64_t>(&test_collector),
                                 .save_area = save_area,
                                 .save_mask = mask});
  REQUIRE(pad);
  std::memcpy(pages.pads(), pad->pad.data(), pad->pad.size());
  std::memcpy(pages.code(), pad->jump.data(), pad->jump.size());
  std::uint64_t result = 0;
  double x = 2.5;
  // (called with an xmm value live across the call, as code at any instruction may have)
  asm volatile(
      "movsd %[x], %%xmm0\n\t"
      "mov $0x1111, %%rdi\n\t"
      "mov $0x2222, %%rsi\n\t"
      "call *%[fn]\n\t"
      "movsd %%xmm0, %[x]\n\t"
      : "=a"(result), [x] "+m"(x)
      : [fn] "r"(pages.code())
      : "rdi", "rsi", "rcx", "rdx", "r8", "r9", "r10", "r11", "xmm0", "xmm1", "memory", "cc");
  xmm_out = x;
  return result;
}

}  // namespace

TEST_CASE("jump pad: a 5-byte jump replaces an instruction of 5 bytes or more; others stay trap tracepoints",
          "[arch][trace]") {
  CHECK(pad_for(Code{0x8b, 0x05, 0xca, 0x2e, 0x00, 0x00})->moved == 6);    // mov eax,[rip+0x2eca]
  CHECK(pad_for(Code{0xc7, 0x45, 0xfc, 0, 0, 0, 0})->moved == 7);          // mov dword [rbp-4],0
  CHECK(pad_for(Code{0xe8, 0x10, 0, 0, 0})->moved == 5);                   // call rel32
  CHECK(pad_for(Code{0x0f, 0x84, 0x10, 0, 0, 0})->moved == 6);             // je rel32
  CHECK_FALSE(pad_for(Code{0x8b, 0x45, 0xec, 0x90, 0x90, 0x90}));          // mov eax,[rbp-0x14]: 3 bytes
  CHECK_FALSE(pad_for(Code{0xc3, 0x90, 0x90, 0x90, 0x90}));                // ret
  CHECK_FALSE(pad_for(Code{0xff, 0x15, 0x10, 0, 0, 0}));                   // call [rip+0x10]: indirect
  CHECK_FALSE(pad_for(Code{0x0f, 0x05, 0x90, 0x90, 0x90}));                // syscall
  // Out of a rel32's reach.
  CHECK_FALSE(pad_for(Code{0xc7, 0x45, 0xfc, 0, 0, 0, 0}, kAt + (std::uint64_t{1} << 33)));
}

TEST_CASE("jump pad: the jump goes to the pad, which ends with the moved instruction and the jump back",
          "[arch][trace]") {
  const std::uint64_t pad_at = kAt + 0x100000;
  auto pad = pad_for(Code{0x8b, 0x05, 0xca, 0x2e, 0x00, 0x00}, pad_at);  // mov eax,[rip+0x2eca]
  REQUIRE(pad);
  std::int32_t rel = 0;
  std::memcpy(&rel, pad->jump.data() + 1, 4);
  CHECK(pad->jump[0] == 0xe9);
  CHECK(kAt + 5 + rel == pad_at);
  const Code& c = pad->pad;
  REQUIRE(c.size() > 11);
  // ... mov eax,[rip+disp'] reaching kAt + 6 + 0x2eca, then jmp kAt + 6.
  const std::uint64_t moved_at = pad_at + c.size() - 11;
  std::int32_t disp = 0;
  std::memcpy(&disp, c.data() + c.size() - 9, 4);
  CHECK(c[c.size() - 11] == 0x8b);
  CHECK(moved_at + 6 + disp == kAt + 6 + 0x2eca);
  std::memcpy(&rel, c.data() + c.size() - 4, 4);
  CHECK(c[c.size() - 5] == 0xe9);
  CHECK(pad_at + c.size() + rel == kAt + 6);
}

TEST_CASE("jump pad: runs for real; the collector sees the registers, the program sees no change", "[arch][trace]") {
  std::uint64_t mask = 0;
  const std::uint32_t xsave = xsave_area(mask);
  for (std::uint32_t area : {std::uint32_t{0}, xsave}) {
    INFO("save area " << area);
    SECTION("mov eax, imm32") {
      seen = {};
      double x = 0;
      CHECK(run_through_pad(Code{0xb8, 0x2a, 0, 0, 0, 0xc3}, area, mask, x) == 42);  // mov eax,42; ret
      CHECK(seen.calls == 1);
      CHECK(seen.index == 7);
      CHECK(seen.rdi == 0x1111);
      CHECK(seen.rsi == 0x2222);
      CHECK((seen.rflags & 0x2) != 0);  // (bit 1 of rflags is always set)
      CHECK(seen.mxcsr_byte != 0);      // (MXCSR's default 0x1f80: low byte 0x80)
      CHECK(x == 2.5);                  // xmm0 as it was, the collector's xorps undone
    }
    SECTION("call rel32: the callee returns to the instruction after the original call") {
      seen = {};
      double x = 0;
      // call +1 (to the `mov eax,7; ret` after the ret below); ret; mov eax,7; ret
      const Code program{0xe8, 0x01, 0, 0, 0, 0xc3, 0xb8, 0x07, 0, 0, 0, 0xc3};
      CHECK(run_through_pad(program, area, mask, x) == 7);
      CHECK(seen.calls == 1);
      CHECK(x == 2.5);
    }
    SECTION("mov eax, [rip+disp]: the moved copy reads what the original read") {
      seen = {};
      double x = 0;
      // mov eax,[rip+1] (the dword after the ret); ret; dd 0x600d
      const Code program{0x8b, 0x05, 0x01, 0, 0, 0, 0xc3, 0x0d, 0x60, 0, 0};
      CHECK(run_through_pad(program, area, mask, x) == 0x600d);
      CHECK(seen.calls == 1);
    }
  }
}
