// Branch-trace documents and parsers against btrace.md §4, §5 and the §12 test vectors.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "protocol/btrace.hpp"
#include "protocol/errors.hpp"

using protocol::BtraceAnnex;
using protocol::BtraceFormat;
using protocol::BtraceOp;
using protocol::XmlBtraceBlock;

namespace {

const std::string kHead = "<!DOCTYPE btrace SYSTEM \"btrace.dtd\">\n<btrace version=\"1.0\">\n";
const std::string kTail = std::string("</btrace>\n") + '\0';

std::string text_reply(const base::Error& e) {
  return protocol::encode_error(e, protocol::ErrStyle::Text);
}

}  // namespace

TEST_CASE("btrace_xml: gdbserver's layout, newest block first, trailing NUL", "[btrace]") {
  std::vector<XmlBtraceBlock> tv2 = {{0x401020, 0x401024}, {0x0, 0x401004}};
  std::string doc = protocol::btrace_xml(tv2);
  CHECK(doc == kHead +
                   "<block begin=\"0x401020\" end=\"0x401024\"/>\n<block begin=\"0x0\" end=\"0x401004\"/>\n" +
                   kTail);
  CHECK(doc.back() == '\0');
  CHECK(doc.find('\0') == doc.size() - 1);
}

TEST_CASE("btrace_xml: TV3 delta and the empty trace of TV1/TV8", "[btrace]") {
  std::vector<XmlBtraceBlock> tv3 = {
      {0x401020, 0x401024}, {0x401004, 0x401004}, {0x401009, 0x401009}, {0, 0x401025}};
  CHECK(protocol::btrace_xml(tv3) == kHead +
                                         "<block begin=\"0x401020\" end=\"0x401024\"/>\n"
                                         "<block begin=\"0x401004\" end=\"0x401004\"/>\n"
                                         "<block begin=\"0x401009\" end=\"0x401009\"/>\n"
                                         "<block begin=\"0x0\" end=\"0x401025\"/>\n" +
                                         kTail);
  CHECK(protocol::btrace_xml({}) == kHead + kTail);
  std::vector<XmlBtraceBlock> tv1 = {{0, 0x401000}};
  CHECK(protocol::btrace_xml(tv1) == kHead + "<block begin=\"0x0\" end=\"0x401000\"/>\n" + kTail);
}

TEST_CASE("btrace_xml: 64-bit addresses in lowercase hex", "[btrace]") {
  std::vector<XmlBtraceBlock> blocks = {{0x7ffff7fe3abc, 0xFFFFFFFFFFFFFFFF}};
  CHECK(protocol::btrace_xml(blocks) ==
        kHead + "<block begin=\"0x7ffff7fe3abc\" end=\"0xffffffffffffffff\"/>\n" + kTail);
}

TEST_CASE("btrace_conf_xml: TV10 and not enabled", "[btrace]") {
  auto doc = protocol::btrace_conf_xml(true, 0x10000);
  REQUIRE(doc);
  CHECK(*doc ==
        std::string("<!DOCTYPE btrace-conf SYSTEM \"btrace-conf.dtd\">\n<btrace-conf version=\"1.0\">\n"
                    "<bts size=\"0x10000\" />\n</btrace-conf>\n") +
            '\0');
  auto small = protocol::btrace_conf_xml(true, 0xc0);
  REQUIRE(small);
  CHECK(small->find("<bts size=\"0xc0\" />") != std::string::npos);
  auto off = protocol::btrace_conf_xml(false, 0x10000);
  REQUIRE_FALSE(off);
  CHECK(text_reply(off.error()) == "E.Btrace not enabled.");
}

TEST_CASE("parse_btrace_conf_size: hex with or without 0x, up to 32 bits", "[btrace]") {
  struct Case {
    const char* body;
    std::uint64_t value;
  };
  for (const Case& c : {Case{"0x10000", 0x10000}, Case{"10000", 0x10000}, Case{"0X4000", 0x4000},
                        Case{"0xffffffff", 0xffffffff}, Case{"0", 0}, Case{"0x0", 0},
                        Case{"00000000000c0", 0xc0}, Case{"AbC", 0xabc}}) {
    INFO(c.body);
    auto v = protocol::parse_btrace_conf_size(c.body);
    REQUIRE(v);
    CHECK(*v == c.value);
  }
  for (const char* body : {"", "0x", "zz", "0x10000 ", " 0x10", "-1", "+1", "0x100000000", "10g", "0x1x"}) {
    INFO(body);
    auto v = protocol::parse_btrace_conf_size(body);
    REQUIRE_FALSE(v);
    CHECK(text_reply(v.error()) == "E.Bad size value.");
  }
}

TEST_CASE("parse_btrace_conf: bts and pt sizes, other options rejected (TV11)", "[btrace]") {
  auto bts = protocol::parse_btrace_conf("bts:size=0x10000");
  REQUIRE(bts);
  CHECK(bts->format == BtraceFormat::Bts);
  CHECK(bts->size == 0x10000);
  auto pt = protocol::parse_btrace_conf("pt:size=0x4000");
  REQUIRE(pt);
  CHECK(pt->format == BtraceFormat::Pt);
  CHECK(pt->size == 0x4000);
  auto junk = protocol::parse_btrace_conf("bts:size=zz");
  REQUIRE_FALSE(junk);
  CHECK(text_reply(junk.error()) == "E.Bad size value.");
  for (const char* body : {"foo=1", "", "bts:size", "bts:sz=1", "BTS:size=1"}) {
    INFO(body);
    auto r = protocol::parse_btrace_conf(body);
    REQUIRE_FALSE(r);
    CHECK(text_reply(r.error()) == "E.Bad Qbtrace configuration option.");
  }
}

TEST_CASE("parse_btrace_op", "[btrace]") {
  CHECK(protocol::parse_btrace_op("bts").value() == BtraceOp::Bts);
  CHECK(protocol::parse_btrace_op("pt").value() == BtraceOp::Pt);
  CHECK(protocol::parse_btrace_op("off").value() == BtraceOp::Off);
  for (const char* body : {"bogus", "", "bts ", "Bts", "off:"}) {
    INFO(body);
    auto r = protocol::parse_btrace_op(body);
    REQUIRE_FALSE(r);
    CHECK(text_reply(r.error()) == "E.Bad Qbtrace operation.  Use bts, pt, or off.");
  }
}

TEST_CASE("parse_btrace_annex", "[btrace]") {
  CHECK(protocol::parse_btrace_annex("all").value() == BtraceAnnex::All);
  CHECK(protocol::parse_btrace_annex("new").value() == BtraceAnnex::New);
  CHECK(protocol::parse_btrace_annex("delta").value() == BtraceAnnex::Delta);
  for (const char* annex : {"bogus", "", "ALL", "delta2", "al"}) {
    INFO(annex);
    auto r = protocol::parse_btrace_annex(annex);
    REQUIRE_FALSE(r);
    CHECK(text_reply(r.error()) == "E.Bad annex.");
  }
}
