// target.xml: byte-identical to gdbserver 13's on this machine, and consistent with the
// register table for every feature combination.
#include <catch2/catch.hpp>

#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "arch/x86/register_layout.hpp"
#include "arch/x86/target_description.hpp"

using namespace arch::x86;

namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

struct XmlReg {
  std::string name;
  int bitsize;
  int regnum;
};

std::vector<XmlReg> parse_regs(const std::string& xml) {
  static const std::regex re(R"re(<reg name="([^"]+)" bitsize="(\d+)" type="[^"]+" regnum="(\d+)")re");
  std::vector<XmlReg> out;
  for (auto it = std::sregex_iterator(xml.begin(), xml.end(), re); it != std::sregex_iterator();
       ++it) {
    out.push_back({(*it)[1].str(), std::stoi((*it)[2].str()), std::stoi((*it)[3].str())});
  }
  return out;
}

std::vector<std::string> parse_features(const std::string& xml) {
  static const std::regex re(R"re(<feature name="([^"]+)">)re");
  std::vector<std::string> out;
  for (auto it = std::sregex_iterator(xml.begin(), xml.end(), re); it != std::sregex_iterator();
       ++it) {
    out.push_back((*it)[1].str());
  }
  return out;
}

}  // namespace

TEST_CASE("target.xml matches gdbserver 13 on this machine byte for byte", "[arch][tdesc]") {
  const std::string expected = read_file(HS_ARCH_TEST_DATA "/amd64_avx512_pkeys_linux.xml");
  REQUIRE(expected.size() == 13717);
  const std::string xml = target_xml(0x602e7);
  CHECK(xml.size() == expected.size());
  CHECK(xml == expected);
  CHECK(target_xml(RegisterLayout(reference_geometry())) == expected);
}

TEST_CASE("i386 target.xml matches gdbserver 13's for a -m32 program on this machine", "[arch][tdesc][i386]") {
  // gdbserver 13.1 on an AMD EPYC with AVX-512 and no protection keys (XCR0 0xe7).
  const std::string expected = read_file(HS_ARCH_TEST_DATA "/i386_avx512_linux.xml");
  REQUIRE(expected.size() == 7356);
  CHECK(target_xml(0xe7, Isa::I386) == expected);
  const auto regs = parse_regs(expected);
  REQUIRE(regs.size() == 66);
  CHECK(regs[41].name == "orig_eax");
  CHECK(regs[65].name == "zmm7h");
}

TEST_CASE("target.xml registers agree with the layout", "[arch][tdesc]") {
  for (auto [xcr0, isa] : {std::pair{0x3ULL, Isa::Amd64}, {0x7ULL, Isa::Amd64}, {0x207ULL, Isa::Amd64},
                           {0xe7ULL, Isa::Amd64}, {0x2e7ULL, Isa::Amd64}, {0x602e7ULL, Isa::Amd64},
                           {0x3ULL, Isa::I386}, {0x7ULL, Isa::I386}, {0x2e7ULL, Isa::I386}}) {
    INFO("xcr0 " << xcr0 << (isa == Isa::I386 ? " i386" : " amd64"));
    XsaveGeometry geo = reference_geometry();
    geo.xcr0 = xcr0;
    const RegisterLayout layout(geo, isa);
    const auto regs = parse_regs(target_xml(xcr0, isa));
    REQUIRE(regs.size() == layout.registers().size());
    uint32_t offset = 0;
    for (size_t i = 0; i < regs.size(); ++i) {
      const RegisterInfo& r = layout.registers()[i];
      CHECK(regs[i].name == r.name);
      CHECK(regs[i].regnum == r.regnum);
      CHECK(regs[i].bitsize == static_cast<int>(r.size * 8));
      CHECK(r.g_offset == offset);
      offset += static_cast<uint32_t>(regs[i].bitsize / 8);
    }
    CHECK(offset == layout.g_size());
  }
}

TEST_CASE("target.xml features follow XCR0", "[arch][tdesc]") {
  using V = std::vector<std::string>;
  const V base = {"org.gnu.gdb.i386.core", "org.gnu.gdb.i386.sse", "org.gnu.gdb.i386.linux",
                  "org.gnu.gdb.i386.segments"};
  auto with = [&base](std::initializer_list<const char*> extra) {
    V v = base;
    v.insert(v.end(), extra.begin(), extra.end());
    return v;
  };
  CHECK(parse_features(target_xml(0x0)) == base);  // x87 and SSE are implied
  CHECK(parse_features(target_xml(0x3)) == base);
  CHECK(parse_features(target_xml(0x7)) == with({"org.gnu.gdb.i386.avx"}));
  CHECK(parse_features(target_xml(0x207)) ==
        with({"org.gnu.gdb.i386.avx", "org.gnu.gdb.i386.pkeys"}));
  CHECK(parse_features(target_xml(0xe7)) ==
        with({"org.gnu.gdb.i386.avx", "org.gnu.gdb.i386.avx512"}));
  CHECK(parse_features(target_xml(0x602e7)) ==
        with({"org.gnu.gdb.i386.avx", "org.gnu.gdb.i386.avx512", "org.gnu.gdb.i386.pkeys"}));

  CHECK(parse_features(target_xml(0x2e7, Isa::I386)) ==
        V{"org.gnu.gdb.i386.core", "org.gnu.gdb.i386.sse", "org.gnu.gdb.i386.linux",
          "org.gnu.gdb.i386.avx", "org.gnu.gdb.i386.avx512", "org.gnu.gdb.i386.pkeys"});
  CHECK(target_xml(0x3, Isa::I386).find("<architecture>i386</architecture>") != std::string::npos);

  const std::string minimal = target_xml(0x3);
  CHECK(minimal.find("<architecture>i386:x86-64</architecture>") != std::string::npos);
  CHECK(minimal.find("<osabi>GNU/Linux</osabi>") != std::string::npos);
  CHECK(minimal.find("i386_mxcsr") != std::string::npos);
  CHECK(minimal.find("v2ui128") == std::string::npos);
  CHECK(minimal.substr(minimal.size() - 10) == "</target>\n");
}
