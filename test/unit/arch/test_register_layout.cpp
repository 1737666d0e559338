// The register table against rsp-packets.md §7.2 (this machine: XCR0 0x602e7, 2420 bytes).
#include <catch2/catch.hpp>

#include <set>
#include <string>

#include "arch/x86/register_layout.hpp"

using namespace arch::x86;

namespace {

const RegisterInfo& by_name(const RegisterLayout& l, std::string_view name) {
  for (const RegisterInfo& r : l.registers()) {
    if (r.name == name) {
      return r;
    }
  }
  FAIL("no register " << std::string(name));
  return l.registers()[0];
}

}  // namespace

TEST_CASE("reference layout: regnums, sizes and g offsets", "[arch][layout]") {
  const RegisterLayout l(reference_geometry());
  REQUIRE(l.g_size() == 2420);
  REQUIRE(l.registers().size() == 149);

  struct Row {
    std::string_view name;
    int regnum;
    uint32_t size;
    uint32_t g_offset;
  };
  const Row rows[] = {
      {"rax", 0, 8, 0},          {"rbx", 1, 8, 8},          {"rsp", 7, 8, 56},
      {"r15", 15, 8, 120},       {"rip", 16, 8, 128},       {"eflags", 17, 4, 136},
      {"cs", 18, 4, 140},        {"gs", 23, 4, 160},        {"st0", 24, 10, 164},
      {"st7", 31, 10, 234},      {"fctrl", 32, 4, 244},     {"ftag", 34, 4, 252},
      {"fop", 39, 4, 272},       {"xmm0", 40, 16, 276},     {"xmm15", 55, 16, 516},
      {"mxcsr", 56, 4, 532},     {"orig_rax", 57, 8, 536},  {"fs_base", 58, 8, 544},
      {"gs_base", 59, 8, 552},   {"ymm0h", 60, 16, 560},    {"ymm15h", 75, 16, 800},
      {"xmm16", 76, 16, 816},    {"ymm16h", 92, 16, 1072},  {"k0", 108, 8, 1328},
      {"k7", 115, 8, 1384},      {"zmm0h", 116, 32, 1392},  {"zmm31h", 147, 32, 2384},
      {"pkru", 148, 4, 2416},
  };
  for (const Row& row : rows) {
    INFO(std::string(row.name));
    const RegisterInfo& r = by_name(l, row.name);
    CHECK(r.regnum == row.regnum);
    CHECK(r.size == row.size);
    CHECK(r.g_offset == row.g_offset);
    CHECK(l.find(row.regnum) == &r);
  }
  CHECK(l.find(149) == nullptr);
  CHECK(l.find(-1) == nullptr);
}

TEST_CASE("reference layout: where Linux keeps each register", "[arch][layout]") {
  const RegisterLayout l(reference_geometry());
  struct Row {
    std::string_view name;
    Storage storage;
    uint32_t location;
  };
  const Row rows[] = {
      {"rax", Storage::Gpr, 10},      {"rbx", Storage::Gpr, 5},       {"rbp", Storage::Gpr, 4},
      {"rsp", Storage::Gpr, 19},      {"r8", Storage::Gpr, 9},        {"r15", Storage::Gpr, 0},
      {"rip", Storage::Gpr, 16},      {"eflags", Storage::Gpr, 18},   {"cs", Storage::Gpr, 17},
      {"ss", Storage::Gpr, 20},       {"ds", Storage::Gpr, 23},       {"gs", Storage::Gpr, 26},
      {"orig_rax", Storage::Gpr, 15}, {"fs_base", Storage::Gpr, 21},  {"gs_base", Storage::Gpr, 22},
      {"st0", Storage::Fxsave, 32},   {"st7", Storage::Fxsave, 144},  {"fctrl", Storage::Fxsave, 0},
      {"fstat", Storage::Fxsave, 2},  {"ftag", Storage::Fxsave, 4},   {"fiseg", Storage::Fxsave, 12},
      {"fioff", Storage::Fxsave, 8},  {"foseg", Storage::Fxsave, 20}, {"fooff", Storage::Fxsave, 16},
      {"fop", Storage::Fxsave, 6},    {"xmm0", Storage::Fxsave, 160}, {"xmm15", Storage::Fxsave, 400},
      {"mxcsr", Storage::Fxsave, 24}, {"ymm0h", Storage::Xsave, 576}, {"ymm15h", Storage::Xsave, 816},
      {"xmm16", Storage::Xsave, 1664}, {"xmm31", Storage::Xsave, 1664 + 64 * 15},
      {"ymm16h", Storage::Xsave, 1680}, {"k0", Storage::Xsave, 1088}, {"k7", Storage::Xsave, 1144},
      {"zmm0h", Storage::Xsave, 1152}, {"zmm15h", Storage::Xsave, 1152 + 32 * 15},
      {"zmm16h", Storage::Xsave, 1696}, {"zmm31h", Storage::Xsave, 1664 + 64 * 15 + 32},
      {"pkru", Storage::Xsave, 2688},
  };
  for (const Row& row : rows) {
    INFO(std::string(row.name));
    const RegisterInfo& r = by_name(l, row.name);
    CHECK(r.storage == row.storage);
    CHECK(r.location == row.location);
  }
}

TEST_CASE("layout: regnums are dense, offsets are running sums", "[arch][layout]") {
  for (uint64_t xcr0 : {0x3ULL, 0x7ULL, 0xe7ULL, 0x207ULL, 0x2e7ULL, 0x602e7ULL}) {
    XsaveGeometry geo = reference_geometry();
    geo.xcr0 = xcr0;
    const RegisterLayout l(geo);
    uint32_t offset = 0;
    int regnum = 0;
    std::set<std::string_view> names;
    for (const RegisterInfo& r : l.registers()) {
      CHECK(r.regnum == regnum++);
      CHECK(r.g_offset == offset);
      CHECK(names.insert(r.name).second);
      offset += r.size;
    }
    CHECK(l.g_size() == offset);
  }
}

TEST_CASE("features from XCR0", "[arch][layout]") {
  auto size_for = [](uint64_t xcr0) {
    XsaveGeometry geo = reference_geometry();
    geo.xcr0 = xcr0;
    return RegisterLayout(geo).g_size();
  };
  CHECK(size_for(0x3) == 560);                  // core + sse + linux + segments
  CHECK(size_for(0x7) == 816);                  // + avx
  CHECK(size_for(0x207) == 820);                // + pkeys
  CHECK(size_for(0x67) == 816);                 // avx512 needs bits 5, 6 and 7
  CHECK(size_for(0xe7) == 2416);                // + avx512
  CHECK(size_for(0x602e7) == 2420);             // AMX bits add nothing
  CHECK(features_from_xcr0(0x602e7).avx512);
  CHECK_FALSE(features_from_xcr0(0x607).avx512);

  XsaveGeometry fx;  // FXSAVE only: no header, no extended components
  fx.xcr0 = 0x2e7;
  const RegisterLayout l(fx);
  CHECK(l.g_size() == 560);
  CHECK(fx.has_component(kX87));
  CHECK_FALSE(fx.has_component(kAvx));
}
