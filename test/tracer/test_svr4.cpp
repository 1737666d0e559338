// The r_debug / link_map walk on a hand-made memory image.
#include <elf.h>

#include <catch2/catch.hpp>
#include <cstring>
#include <map>

#include "tracer/linux/svr4_libraries.hpp"

using tracer::Addr;
using tracer::Bytes;

namespace {

// Sparse fake memory: regions of bytes at addresses.
struct FakeMemory {
  std::map<Addr, Bytes> regions;

  template <class T>
  void put(Addr addr, const T& value) {
    Bytes b(sizeof value);
    std::memcpy(b.data(), &value, sizeof value);
    regions[addr] = b;
  }
  void put_string(Addr addr, const std::string& s) {
    regions[addr] = Bytes(s.begin(), s.end());
    regions[addr].push_back(0);
  }
  base::Result<Bytes> read(Addr addr, std::size_t len) const {
    for (const auto& [start, bytes] : regions) {
      if (addr >= start && addr < start + bytes.size()) {
        const std::size_t off = addr - start;
        const std::size_t n = std::min(len, bytes.size() - off);
        return Bytes(bytes.begin() + static_cast<long>(off), bytes.begin() + static_cast<long>(off + n));
      }
    }
    return base::sys_error("read", EIO);
  }
};

Bytes auxv_of(std::initializer_list<std::pair<std::uint64_t, std::uint64_t>> entries) {
  Bytes out;
  auto push = [&out](std::uint64_t v) {
    for (int i = 0; i < 8; ++i) {
      out.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
    }
  };
  for (auto [type, value] : entries) {
    push(type);
    push(value);
  }
  push(AT_NULL);
  push(0);
  return out;
}

struct LinkMapRecord {
  std::uint64_t l_addr, l_name, l_ld, l_next, l_prev;
};

// A PIE loaded at 0x555555554000 with PT_PHDR at 0x40 and PT_DYNAMIC at 0x2000.
constexpr Addr kBias = 0x555555554000;
constexpr Addr kRDebug = 0x7ffff7ffe118;

FakeMemory program_image(Addr dt_debug) {
  FakeMemory mem;
  Elf64_Phdr ph[2] = {};
  ph[0].p_type = PT_PHDR;
  ph[0].p_vaddr = 0x40;
  ph[1].p_type = PT_DYNAMIC;
  ph[1].p_vaddr = 0x2000;
  ph[1].p_memsz = 3 * sizeof(Elf64_Dyn);
  mem.put(kBias + 0x40, ph);
  Elf64_Dyn dyn[3] = {};
  dyn[0].d_tag = DT_NEEDED;
  dyn[1].d_tag = DT_DEBUG;
  dyn[1].d_un.d_ptr = dt_debug;
  dyn[2].d_tag = DT_NULL;
  mem.put(kBias + 0x2000, dyn);
  return mem;
}

const Bytes kAuxv =
    auxv_of({{AT_PHDR, kBias + 0x40}, {AT_PHENT, sizeof(Elf64_Phdr)}, {AT_PHNUM, 2}, {AT_ENTRY, kBias + 0x1040},
             {AT_BASE, 0x7f0000000000}});

}  // namespace

TEST_CASE("svr4: before the loader ran the list is empty", "[svr4]") {
  FakeMemory mem = program_image(0);
  auto list = tracer::svr4::read_libraries([&](Addr a, std::size_t n) { return mem.read(a, n); }, kAuxv);
  REQUIRE(list.ok());
  CHECK(list->main_lm == 0);
  CHECK(list->libraries.empty());
}

TEST_CASE("svr4: main program first, unnamed entries skipped, lmid is r_debug", "[svr4]") {
  FakeMemory mem = program_image(kRDebug);
  std::uint64_t rdebug[6] = {2, 0x1000, 0, 0, 0, 0};  // version 2, r_map, ..., r_next = 0
  mem.put(kRDebug, rdebug);
  mem.put(0x1000, LinkMapRecord{kBias, 0x5000, kBias + 0x2000, 0x1100, 0});
  mem.put(0x1100, LinkMapRecord{0x7ffff7fc8000, 0x5100, 0x7ffff7fc8440, 0x1200, 0x1000});
  mem.put(0x1200, LinkMapRecord{0x1234000, 0x5200, 0x1234500, 0x1300, 0x1100});
  mem.put(0x1300, LinkMapRecord{0x7ffff7dd3000, 0x5300, 0x7ffff7fa5b60, 0, 0x1200});
  mem.put_string(0x5000, "");
  mem.put_string(0x5100, "linux-vdso.so.1");
  mem.put_string(0x5200, "");
  mem.put_string(0x5300, "/lib/x86_64-linux-gnu/libc.so.6");
  auto list = tracer::svr4::read_libraries([&](Addr a, std::size_t n) { return mem.read(a, n); }, kAuxv);
  REQUIRE(list.ok());
  CHECK(list->main_lm == 0x1000);
  REQUIRE(list->libraries.size() == 2);
  CHECK(list->libraries[0].name == "linux-vdso.so.1");
  CHECK(list->libraries[0].lm == 0x1100);
  CHECK(list->libraries[0].l_addr == 0x7ffff7fc8000);
  CHECK(list->libraries[0].l_ld == 0x7ffff7fc8440);
  CHECK(list->libraries[0].lmid == kRDebug);
  CHECK(list->libraries[1].name == "/lib/x86_64-linux-gnu/libc.so.6");
  CHECK(list->libraries[1].lm == 0x1300);
}

TEST_CASE("svr4: a broken l_prev chain or a cycle ends the walk", "[svr4]") {
  FakeMemory mem = program_image(kRDebug);
  std::uint64_t rdebug[6] = {1, 0x1000, 0, 0, 0, 0};
  mem.put(kRDebug, rdebug);
  mem.put(0x1000, LinkMapRecord{0, 0, 0, 0x1100, 0});
  mem.put(0x1100, LinkMapRecord{1, 0x5100, 2, 0x1000, 0x1000});  // cycles back
  mem.put_string(0x5100, "libone.so");
  auto list = tracer::svr4::read_libraries([&](Addr a, std::size_t n) { return mem.read(a, n); }, kAuxv);
  REQUIRE(list.ok());
  CHECK(list->libraries.size() == 1);
  mem.put(0x1100, LinkMapRecord{1, 0x5100, 2, 0, 0x999});  // wrong l_prev
  list = tracer::svr4::read_libraries([&](Addr a, std::size_t n) { return mem.read(a, n); }, kAuxv);
  REQUIRE(list.ok());
  CHECK(list->libraries.empty());
}

TEST_CASE("svr4: the pure parsers", "[svr4]") {
  CHECK(tracer::svr4::parse_link_map(Bytes(39)) == std::nullopt);
  auto info = tracer::svr4::parse_auxv(kAuxv);
  CHECK(info.phdr == kBias + 0x40);
  CHECK(info.phnum == 2);
  CHECK(info.entry == kBias + 0x1040);
  CHECK(info.interpreter == 0x7f0000000000);
  CHECK(tracer::svr4::parse_auxv(auxv_of({})).interpreter == 0);  // a static program
  Bytes dyn(16, 0);  // DT_NULL only
  CHECK(tracer::svr4::find_dt_debug(dyn) == 0);
  auto rd = tracer::svr4::parse_r_debug(Bytes(8));
  CHECK_FALSE(rd.has_value());
  auto list = tracer::svr4::read_libraries([](Addr, std::size_t) -> base::Result<Bytes> {
    return base::sys_error("read", EIO);
  }, auxv_of({}));
  REQUIRE(list.ok());  // no AT_PHDR: nothing to walk
  CHECK(list->main_lm == 0);
}

TEST_CASE("svr4: a 32-bit program's auxv, headers, r_debug and link map (4-byte words)", "[svr4][i386]") {
  // Laid out as gdbserver 13 read them from a gcc -m32 PIE on this machine.
  constexpr Addr bias = 0x56555000;
  constexpr Addr r_debug = 0xf7ffd964;
  FakeMemory mem;
  Elf32_Phdr ph[3] = {};
  ph[0].p_type = PT_PHDR;
  ph[0].p_vaddr = 0x34;
  ph[1].p_type = PT_LOAD;
  ph[1].p_vaddr = 0x1000;
  ph[1].p_memsz = 0x1e4;
  ph[1].p_flags = PF_R | PF_X;
  ph[2].p_type = PT_DYNAMIC;
  ph[2].p_vaddr = 0x3ef0;
  ph[2].p_memsz = 3 * sizeof(Elf32_Dyn);
  mem.put(bias + 0x34, ph);
  Elf32_Dyn dyn[3] = {};
  dyn[0].d_tag = DT_NEEDED;
  dyn[1].d_tag = DT_DEBUG;
  dyn[1].d_un.d_ptr = r_debug;
  dyn[2].d_tag = DT_NULL;
  mem.put(bias + 0x3ef0, dyn);
  std::uint32_t rdebug[6] = {1, 0xf7ffda50, 0, 0, 0, 0};
  mem.put(r_debug, rdebug);
  std::uint32_t main_lm[5] = {bias, 0xf7ffd000, bias + 0x3ef0, 0xf7ffd608, 0};
  std::uint32_t ld_lm[5] = {0xf7fc9000, 0xf7ffd100, 0xf7ffcf14, 0, 0xf7ffda50};
  mem.put(0xf7ffda50, main_lm);
  mem.put(0xf7ffd608, ld_lm);
  mem.put_string(0xf7ffd000, "");
  mem.put_string(0xf7ffd100, "/lib/ld-linux.so.2");

  Bytes auxv;
  for (std::uint32_t v : {std::uint32_t{AT_PHDR}, std::uint32_t(bias + 0x34), std::uint32_t{AT_PHENT},
                          std::uint32_t{sizeof(Elf32_Phdr)}, std::uint32_t{AT_PHNUM}, 3u, std::uint32_t{AT_NULL}, 0u}) {
    for (int i = 0; i < 4; ++i) {
      auxv.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
    }
  }
  const auto reader = [&](Addr a, std::size_t n) { return mem.read(a, n); };
  auto program = tracer::svr4::read_main_program(reader, auxv, 4);
  REQUIRE(program.ok());
  REQUIRE(program->has_value());
  CHECK((*program)->bias == bias);
  CHECK((*program)->headers.code_end == 0x11e4);
  auto list = tracer::svr4::read_libraries(reader, auxv, 4);
  REQUIRE(list.ok());
  CHECK(list->main_lm == 0xf7ffda50);
  REQUIRE(list->libraries.size() == 1);
  CHECK(list->libraries[0].name == "/lib/ld-linux.so.2");
  CHECK(list->libraries[0].lm == 0xf7ffd608);
  CHECK(list->libraries[0].l_addr == 0xf7fc9000);
  CHECK(list->libraries[0].l_ld == 0xf7ffcf14);
  CHECK(list->libraries[0].lmid == r_debug);
  // Read as 64-bit words, the same memory makes no sense: nothing is listed.
  auto wrong = tracer::svr4::read_libraries(reader, auxv, 8);
  CHECK((!wrong.ok() || wrong->libraries.empty()));
}
