// encode_error for both reply styles.
#include <catch2/catch.hpp>

#include <cerrno>

#include "protocol/errors.hpp"

using base::Errc;
using protocol::ErrStyle;

TEST_CASE("Code style", "[errors]") {
  CHECK(protocol::encode_error(base::make_error(Errc::malformed, "bad hex digit in address"), ErrStyle::Code) ==
        "E01");
  CHECK(protocol::encode_error(base::make_error(Errc::no_thread, "gone"), ErrStyle::Code) == "E01");
  CHECK(protocol::encode_error(base::sys_error("ptrace", ESRCH), ErrStyle::Code) == "E03");
  CHECK(protocol::encode_error(base::sys_error("read", EIO), ErrStyle::Code) == "E05");
  CHECK(protocol::encode_error(base::sys_error("x", EACCES), ErrStyle::Code) == "E0d");
  CHECK(protocol::encode_error(base::sys_error("x", 0x1234), ErrStyle::Code) == "Eff");
  CHECK(protocol::encode_error(base::sys_error("x", -3), ErrStyle::Code) == "E01");
  CHECK(protocol::encode_error(base::sys_error("x", 0), ErrStyle::Code) == "E01");
  base::Error odd{Errc::invalid, EIO, "not system"};
  CHECK(protocol::encode_error(odd, ErrStyle::Code) == "E01");
}

TEST_CASE("Text style", "[errors]") {
  CHECK(protocol::encode_error(base::make_error(Errc::unsupported, "Btrace not enabled."), ErrStyle::Text) ==
        "E.Btrace not enabled.");
  CHECK(protocol::encode_error(base::sys_error("Failed to start recording", ENOENT), ErrStyle::Text) ==
        "E.Failed to start recording (No such file or directory)");
  std::string framed = protocol::encode_error(base::make_error(Errc::invalid, "a#b$c}d*e\n"), ErrStyle::Text);
  CHECK(framed.rfind("E.", 0) == 0);
  for (char c : {'#', '$', '}', '*', '\n'}) {
    CHECK(framed.find(c) == std::string::npos);
  }
  CHECK(protocol::encode_error(base::make_error(Errc::internal, ""), ErrStyle::Text).size() > 2);
}
