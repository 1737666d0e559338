// qXfer documents and slicing.
#include <catch2/catch.hpp>

#include "protocol/xml.hpp"

using protocol::ThreadId;

TEST_CASE("xml_escape", "[xml]") {
  CHECK(protocol::xml_escape("plain") == "plain");
  CHECK(protocol::xml_escape("a&b<c>d\"e'f") == "a&amp;b&lt;c&gt;d&quot;e&apos;f");
}

TEST_CASE("threads_xml matches gdbserver", "[xml]") {
  std::vector<protocol::XmlThread> threads = {{ThreadId{0x3058, 0x3058}, "simple", 0}};
  CHECK(protocol::threads_xml(threads, true) ==
        "<threads>\n<thread id=\"p3058.3058\" core=\"0\" name=\"simple\"/>\n</threads>\n");
  threads = {{ThreadId{0x4236, 0x4236}, "sleeper", 1}, {ThreadId{0x4236, 0x4237}, "a<b", -1}};
  CHECK(protocol::threads_xml(threads, true) ==
        "<threads>\n<thread id=\"p4236.4236\" core=\"1\" name=\"sleeper\"/>\n"
        "<thread id=\"p4236.4237\" name=\"a&lt;b\"/>\n</threads>\n");
  CHECK(protocol::threads_xml(threads, false) ==
        "<threads>\n<thread id=\"4236\" core=\"1\" name=\"sleeper\"/>\n"
        "<thread id=\"4237\" name=\"a&lt;b\"/>\n</threads>\n");
  CHECK(protocol::threads_xml({}, true) == "<threads>\n</threads>\n");
}

TEST_CASE("libraries_svr4_xml matches a-basic.log", "[xml]") {
  std::vector<protocol::XmlLibrary> libs = {
      {"/lib64/ld-linux-x86-64.so.2", 0x7ffff7ffdad0, 0x7ffff7fca000, 0x7ffff7ffce40, 0x7ffff7ffe118},
      {"linux-vdso.so.1", 0x7ffff7ffe8b0, 0x7ffff7fc8000, 0x7ffff7fc8440, 0x7ffff7ffe118},
  };
  CHECK(protocol::libraries_svr4_xml(0x7ffff7ffe2e0, libs) ==
        "<library-list-svr4 version=\"1.0\" main-lm=\"0x7ffff7ffe2e0\"><library name=\"/lib64/ld-linux-x86-64.so.2\" "
        "lm=\"0x7ffff7ffdad0\" l_addr=\"0x7ffff7fca000\" l_ld=\"0x7ffff7ffce40\" lmid=\"0x7ffff7ffe118\"/><library "
        "name=\"linux-vdso.so.1\" lm=\"0x7ffff7ffe8b0\" l_addr=\"0x7ffff7fc8000\" l_ld=\"0x7ffff7fc8440\" "
        "lmid=\"0x7ffff7ffe118\"/></library-list-svr4>");
  CHECK(protocol::libraries_svr4_xml(0, {}) == "<library-list-svr4 version=\"1.0\"></library-list-svr4>");
  CHECK(protocol::libraries_svr4_xml(0, {{"a&b", 0, 0, 0, 0}}) ==
        "<library-list-svr4 version=\"1.0\"><library name=\"a&amp;b\" lm=\"0x0\" l_addr=\"0x0\" l_ld=\"0x0\" "
        "lmid=\"0x0\"/></library-list-svr4>");
}

TEST_CASE("xfer_slice", "[xml]") {
  std::string_view doc = "0123456789";
  CHECK(protocol::xfer_slice(doc, 0, 4) == "m0123");
  CHECK(protocol::xfer_slice(doc, 4, 4) == "m4567");
  CHECK(protocol::xfer_slice(doc, 8, 4) == "l89");
  CHECK(protocol::xfer_slice(doc, 6, 4) == "l6789");
  CHECK(protocol::xfer_slice(doc, 0, 0x1000) == "l0123456789");
  CHECK(protocol::xfer_slice(doc, 10, 4) == "l");
  CHECK(protocol::xfer_slice(doc, 11, 4) == "l");
  CHECK(protocol::xfer_slice(doc, ~std::uint64_t{0}, ~std::uint64_t{0}) == "l");
  CHECK(protocol::xfer_slice(doc, 2, ~std::uint64_t{0}) == "l23456789");
  CHECK(protocol::xfer_slice("", 0, 10) == "l");
  // Data is binary-escaped.
  CHECK(protocol::xfer_slice("a#b$c}d*", 0, 4) == "ma}\x03" "b}\x04");
  CHECK(protocol::xfer_slice(std::string_view("\0\0", 2), 0, 10) == std::string("l\0\0", 3));
}
