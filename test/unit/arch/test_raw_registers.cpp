// RawRegisters <-> g / p / P on hand-laid XSAVE areas with the reference geometry.
#include <catch2/catch.hpp>

#include <cstring>
#include <vector>

#include "arch/x86/raw_registers.hpp"

using namespace arch::x86;

namespace {

template <class T>
void put(std::vector<uint8_t>& buf, size_t off, T v) {
  std::memcpy(&buf[off], &v, sizeof v);
}
template <class T>
T get(std::span<const uint8_t> buf, size_t off) {
  T v{};
  std::memcpy(&v, &buf[off], sizeof v);
  return v;
}

// A stopped thread's registers as Linux would hand them over, with XSTATE_BV = bv.
RawRegisters sample(uint64_t bv) {
  RawRegisters raw;
  for (size_t i = 0; i < raw.gpr.size(); ++i) {
    raw.gpr[i] = 0x1000 + i;
  }
  raw.gpr[kRip] = 0x7ffff7fe4b70;
  raw.gpr[kEflags] = 0x202;
  raw.xsave.assign(11008, 0);
  put<uint16_t>(raw.xsave, 0, 0x37f);
  put<uint32_t>(raw.xsave, 24, 0x1f80);
  put<uint64_t>(raw.xsave, kXcr0SwOffset, 0x602e7);
  put<uint64_t>(raw.xsave, kXsaveHeaderOffset, bv);
  for (size_t i = 0; i < 16; ++i) {
    raw.xsave[160 + 16 * i] = static_cast<uint8_t>(0x40 + i);  // xmm_i low byte
    raw.xsave[576 + 16 * i] = static_cast<uint8_t>(0x80 + i);  // ymm_i high half low byte
  }
  put<uint32_t>(raw.xsave, 2688, 0x55555554);  // pkru
  return raw;
}

std::vector<uint8_t> bytes(std::initializer_list<uint8_t> b) { return std::vector<uint8_t>(b); }

}  // namespace

TEST_CASE("g packet reads every register from its home", "[arch][regs]") {
  const RegisterLayout l(reference_geometry());
  const RawRegisters raw = sample(0x2ff);
  const auto g = to_g_packet(l, raw);
  REQUIRE(g.size() == 2420);
  CHECK(get<uint64_t>(g, 0) == 0x1000 + kRax);
  CHECK(get<uint64_t>(g, 8) == 0x1000 + kRbx);
  CHECK(get<uint64_t>(g, 56) == 0x1000 + kRsp);
  CHECK(get<uint64_t>(g, 128) == 0x7ffff7fe4b70);
  CHECK(get<uint32_t>(g, 136) == 0x202);
  CHECK(get<uint32_t>(g, 140) == 0x1000 + kCs);
  CHECK(get<uint32_t>(g, 244) == 0x37f);   // fctrl
  CHECK(get<uint32_t>(g, 252) == 0xffff);  // ftag: all empty
  CHECK(g[276] == 0x40);                   // xmm0
  CHECK(g[516] == 0x4f);                   // xmm15
  CHECK(get<uint32_t>(g, 532) == 0x1f80);
  CHECK(get<uint64_t>(g, 536) == 0x1000 + kOrigRax);
  CHECK(get<uint64_t>(g, 544) == 0x1000 + kFsBase);
  CHECK(get<uint64_t>(g, 552) == 0x1000 + kGsBase);
  CHECK(g[560] == 0x80);  // ymm0h
  CHECK(g[800] == 0x8f);  // ymm15h
  CHECK(get<uint32_t>(g, 2416) == 0x55555554);
}

TEST_CASE("initial-state components read as their initial values", "[arch][regs]") {
  const RegisterLayout l(reference_geometry());
  RawRegisters raw = sample(0x0);
  put<uint16_t>(raw.xsave, 0, 0x1234);     // stale bytes behind a clear bit are ignored
  put<uint32_t>(raw.xsave, 24, 0);
  const auto g = to_g_packet(l, raw);
  CHECK(get<uint32_t>(g, 244) == 0x37f);
  CHECK(get<uint32_t>(g, 252) == 0xffff);
  CHECK(get<uint32_t>(g, 532) == 0x1f80);
  CHECK(g[276] == 0);
  CHECK(g[560] == 0);
  CHECK(get<uint32_t>(g, 2416) == 0);

  SECTION("a short or missing XSAVE area reads as zeros") {
    raw.xsave.clear();
    const auto g2 = to_g_packet(l, raw);
    REQUIRE(g2.size() == 2420);
    CHECK(get<uint64_t>(g2, 0) == 0x1000 + kRax);
    CHECK(get<uint32_t>(g2, 244) == 0);
    CHECK(get<uint32_t>(g2, 2416) == 0);
  }
}

TEST_CASE("G round trip changes nothing", "[arch][regs]") {
  const RegisterLayout l(reference_geometry());
  for (uint64_t bv : {0x0ULL, 0x3ULL, 0x2ffULL}) {
    RawRegisters raw = sample(bv);
    const RawRegisters before = raw;
    const auto g = to_g_packet(l, raw);
    bool changed = false;
    REQUIRE(from_g_packet(l, g, raw, changed).ok());
    CHECK_FALSE(changed);
    CHECK(raw.gpr == before.gpr);
    CHECK(raw.xsave == before.xsave);
  }
}

TEST_CASE("G writes land in user_regs_struct and XSAVE", "[arch][regs]") {
  const RegisterLayout l(reference_geometry());
  RawRegisters raw = sample(0x3);  // AVX and the rest in initial state
  auto g = to_g_packet(l, raw);

  SECTION("general registers only: xstate untouched") {
    put<uint64_t>(g, 0, 0x1122334455667788);
    put<uint32_t>(g, 136, 0x246);
    put<uint64_t>(g, 536, ~0ULL);  // orig_rax = -1, as GDB does after changing rip
    bool changed = false;
    REQUIRE(from_g_packet(l, g, raw, changed).ok());
    CHECK_FALSE(changed);
    CHECK(raw.gpr[kRax] == 0x1122334455667788);
    CHECK(raw.gpr[kEflags] == 0x246);
    CHECK(raw.gpr[kOrigRax] == ~0ULL);
  }
  SECTION("ymm0h in an initial-state AVX component sets its XSTATE_BV bit") {
    g[560] = 0xaa;
    bool changed = false;
    REQUIRE(from_g_packet(l, g, raw, changed).ok());
    CHECK(changed);
    CHECK(raw.xsave[576] == 0xaa);
    CHECK(raw.xsave[576 + 16] == 0);  // the rest of the component initialised to zeros
    CHECK(xstate_bv(raw.xsave) == 0x7);
  }
  SECTION("xmm0") {
    g[276 + 15] = 0x99;
    bool changed = false;
    REQUIRE(from_g_packet(l, g, raw, changed).ok());
    CHECK(changed);
    CHECK(raw.xsave[160 + 15] == 0x99);
    CHECK(xstate_bv(raw.xsave) == 0x3);
  }
  SECTION("too long") {
    g.push_back(0);
    bool changed = false;
    CHECK(from_g_packet(l, g, raw, changed).error().code == base::Errc::invalid);
  }
}

TEST_CASE("G with a prefix keeps the registers past its end", "[arch][regs]") {
  const RegisterLayout l(reference_geometry());
  RawRegisters raw = sample(0x2ff);
  std::vector<uint8_t> g(132, 0xee);  // rax..r15 and the first 4 bytes of rip
  bool changed = false;
  REQUIRE(from_g_packet(l, g, raw, changed).ok());
  CHECK_FALSE(changed);
  CHECK(raw.gpr[kRax] == 0xeeeeeeeeeeeeeeee);
  CHECK(raw.gpr[kR15] == 0xeeeeeeeeeeeeeeee);
  CHECK(raw.gpr[kRip] == 0x7fffeeeeeeee);  // low half replaced, high half kept
  CHECK(raw.gpr[kEflags] == 0x202);
}

TEST_CASE("single registers by regnum", "[arch][regs]") {
  const RegisterLayout l(reference_geometry());
  RawRegisters raw = sample(0x3);
  bool changed = false;

  CHECK(read_register(l, raw, 16).value() ==
        bytes({0x70, 0x4b, 0xfe, 0xf7, 0xff, 0x7f, 0, 0}));
  CHECK(read_register(l, raw, 149).error().code == base::Errc::invalid);
  CHECK(write_register(l, 0, bytes({1, 2, 3}), raw, changed).error().code ==
        base::Errc::invalid);

  // pkru (component 9) starts in its initial state: writing it sets bit 9.
  REQUIRE(write_register(l, 148, bytes({4, 0, 0, 0}), raw, changed).ok());
  CHECK(changed);
  CHECK(get<uint32_t>(raw.xsave, 2688) == 4);
  CHECK(xstate_bv(raw.xsave) == 0x203);

  // k1, zmm16h: components 5 and 7.
  changed = false;
  REQUIRE(write_register(l, 109, bytes({9, 9, 9, 9, 9, 9, 9, 9}), raw, changed).ok());
  std::vector<uint8_t> z(32, 0x5a);
  REQUIRE(write_register(l, 132, z, raw, changed).ok());
  CHECK(changed);
  CHECK(raw.xsave[1088 + 8] == 9);
  CHECK(raw.xsave[1664 + 32] == 0x5a);
  CHECK(raw.xsave[1664 + 63] == 0x5a);
  CHECK(raw.xsave[1664 + 31] == 0);
  CHECK(xstate_bv(raw.xsave) == 0x2a3);
  CHECK(read_register(l, raw, 132).value() == z);

  // Writing an initial-state register with its initial value changes nothing.
  changed = false;
  REQUIRE(write_register(l, 60, std::vector<uint8_t>(16, 0), raw, changed).ok());
  CHECK_FALSE(changed);
  CHECK(xstate_bv(raw.xsave) == 0x2a3);
}

TEST_CASE("mxcsr and x87 registers in an initial-state legacy area", "[arch][regs]") {
  const RegisterLayout l(reference_geometry());
  RawRegisters raw = sample(0x0);
  put<uint32_t>(raw.xsave, 24, 0);  // as if nobody filled in the init value
  put<uint16_t>(raw.xsave, 0, 0);
  bool changed = false;

  REQUIRE(write_register(l, 40, std::vector<uint8_t>(16, 1), raw, changed).ok());  // xmm0
  CHECK(changed);
  CHECK(xstate_bv(raw.xsave) == 0x2);
  CHECK(get<uint32_t>(raw.xsave, 24) == 0x1f80);  // mxcsr became live with its init value
  CHECK(read_register(l, raw, 56).value() == bytes({0x80, 0x1f, 0, 0}));

  REQUIRE(write_register(l, 33, bytes({0, 0x38, 0, 0}), raw, changed).ok());  // fstat
  CHECK(xstate_bv(raw.xsave) == 0x3);
  CHECK(get<uint16_t>(raw.xsave, 0) == 0x37f);  // fctrl initialised
  CHECK(get<uint16_t>(raw.xsave, 2) == 0x3800);
}

TEST_CASE("x87 tag word and fop", "[arch][regs]") {
  std::vector<uint8_t> fx(512, 0);
  CHECK(full_tag_word(fx) == 0xffff);

  // TOP = 6; st0 = physical 6 holds 1.0, st1 = physical 7 holds +0, st2 = physical 0 a NaN.
  put<uint16_t>(fx, 2, 6 << 11);
  fx[4] = 0xc1;
  put<uint64_t>(fx, 32, 0x8000000000000000);
  put<uint16_t>(fx, 32 + 8, 0x3fff);
  put<uint16_t>(fx, 64 + 8, 0x7fff);
  CHECK(full_tag_word(fx) == 0x4ffe);  // phys0 special(10), phys6 valid(00), phys7 zero(01)

  CHECK(abridged_tag_byte(0xffff) == 0);
  CHECK(abridged_tag_byte(0x4ffe) == 0xc1);
  CHECK(abridged_tag_byte(0x0000) == 0xff);

  const RegisterLayout l(reference_geometry());
  RawRegisters raw = sample(0x3);
  bool changed = false;
  // ftag written with another full form of the same abridged byte: no byte changes.
  REQUIRE(write_register(l, 34, bytes({0xff, 0xff, 0, 0}), raw, changed).ok());
  CHECK_FALSE(changed);
  REQUIRE(write_register(l, 34, bytes({0xfe, 0x4f, 0, 0}), raw, changed).ok());
  CHECK(changed);
  CHECK(raw.xsave[4] == 0xc1);

  // fop keeps 11 bits.
  put<uint16_t>(raw.xsave, 6, 0xffff);
  CHECK(read_register(l, raw, 39).value() == bytes({0xff, 0x07, 0, 0}));
  REQUIRE(write_register(l, 39, bytes({0x34, 0xfa, 0, 0}), raw, changed).ok());
  CHECK(get<uint16_t>(raw.xsave, 6) == 0x234);
}

TEST_CASE("XCR0 and XSTATE_BV from the area", "[arch][regs]") {
  const RawRegisters raw = sample(0x2e7);
  CHECK(xcr0_from_xsave(raw.xsave) == 0x602e7);
  CHECK(xstate_bv(raw.xsave) == 0x2e7);
  CHECK(xcr0_from_xsave(std::vector<uint8_t>(100)) == 0);
}

TEST_CASE("i386: the low halves of the same words, eax and orig_eax sign-extended", "[arch][regs][i386]") {
  const RegisterLayout l(reference_geometry(), Isa::I386);
  RawRegisters raw = sample(0xe7);
  raw.gpr[kRip] = 0x0804851a;
  bool changed = false;
  // eip is regnum 8, 4 bytes; xmm3 regnum 35 is the FXSAVE slot of xmm3 as on amd64.
  CHECK(read_register(l, raw, 8).value() == bytes({0x1a, 0x85, 0x04, 0x08}));
  CHECK(read_register(l, raw, 35).value()[0] == 0x43);
  CHECK(read_register(l, raw, 0).value() == bytes({0x0a, 0x10, 0, 0}));  // eax = rax's word

  // orig_eax (41) = -1 reaches the kernel as a 64-bit -1: no syscall restart.
  REQUIRE(write_register(l, 41, bytes({0xff, 0xff, 0xff, 0xff}), raw, changed).ok());
  CHECK(raw.gpr[kOrigRax] == ~0ULL);
  REQUIRE(write_register(l, 0, bytes({0xfc, 0xff, 0xff, 0xff}), raw, changed).ok());
  CHECK(raw.gpr[kRax] == static_cast<uint64_t>(-4));
  // Others zero-extend: a stale upper half is cleared.
  raw.gpr[kRcx] = 0xdead00000000ULL;
  REQUIRE(write_register(l, 1, bytes({0xff, 0xff, 0xff, 0xff}), raw, changed).ok());
  CHECK(raw.gpr[kRcx] == 0xffffffffULL);
  CHECK_FALSE(changed);

  // k1 (51) and zmm7h (65): the same XSAVE homes as on amd64.
  REQUIRE(write_register(l, 51, bytes({9, 9, 9, 9, 9, 9, 9, 9}), raw, changed).ok());
  REQUIRE(write_register(l, 65, std::vector<uint8_t>(32, 0x5a), raw, changed).ok());
  CHECK(changed);
  CHECK(raw.xsave[1088 + 8] == 9);
  CHECK(raw.xsave[1152 + 32 * 7] == 0x5a);
  CHECK(to_g_packet(l, raw).size() == l.g_size());

  // What an amd64 program has and an i386 one does not is refused, as are wrong sizes.
  CHECK(read_register(l, raw, static_cast<int>(l.registers().size())).error().code == base::Errc::invalid);
  CHECK(write_register(l, 8, bytes({1, 2, 3, 4, 5, 6, 7, 8}), raw, changed).error().code == base::Errc::invalid);
  CHECK(from_g_packet(l, std::vector<uint8_t>(l.g_size() + 1), raw, changed).error().code == base::Errc::invalid);
}
