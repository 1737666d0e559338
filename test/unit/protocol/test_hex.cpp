// Hex helpers.
#include <catch2/catch.hpp>

#include "protocol/hex.hpp"

using base::Errc;

TEST_CASE("to_hex", "[hex]") {
  protocol::Bytes b = {0x00, 0x7f, 0xab, 0xff};
  CHECK(protocol::to_hex(b) == "007fabff");
  CHECK(protocol::to_hex(protocol::Bytes{}) == "");
  CHECK(protocol::to_hex(std::string_view("just probing")) == "6a7573742070726f62696e67");
}

TEST_CASE("from_hex and from_hex_string", "[hex]") {
  auto b = protocol::from_hex("007FabfF");
  REQUIRE(b.ok());
  CHECK(*b == protocol::Bytes{0x00, 0x7f, 0xab, 0xff});
  CHECK(protocol::from_hex("")->empty());
  CHECK(*protocol::from_hex_string("6a7573742070726f62696e67") == "just probing");
  for (const char* bad : {"0", "abc", "0g", "g0", " 1", "1 ", "-1", "0x"}) {
    INFO(bad);
    auto r = protocol::from_hex(bad);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().code == Errc::malformed);
    CHECK_FALSE(r.error().detail.empty());
    CHECK_FALSE(protocol::from_hex_string(bad).ok());
  }
}

TEST_CASE("parse_hex_u64", "[hex]") {
  CHECK(*protocol::parse_hex_u64("0") == 0);
  CHECK(*protocol::parse_hex_u64("1f") == 0x1f);
  CHECK(*protocol::parse_hex_u64("DEADbeef") == 0xdeadbeef);
  CHECK(*protocol::parse_hex_u64("ffffffffffffffff") == ~std::uint64_t{0});
  CHECK(*protocol::parse_hex_u64("0000000000000001") == 1);
  for (const char* bad : {"", "10000000000000000", "x", "1g", "-1", "+1", " 1", "0x1"}) {
    INFO(bad);
    auto r = protocol::parse_hex_u64(bad);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().code == Errc::malformed);
  }
}

TEST_CASE("parse_hex_i64", "[hex]") {
  CHECK(*protocol::parse_hex_i64("0") == 0);
  CHECK(*protocol::parse_hex_i64("-1") == -1);
  CHECK(*protocol::parse_hex_i64("-1a") == -0x1a);
  CHECK(*protocol::parse_hex_i64("7fffffffffffffff") == INT64_MAX);
  for (const char* bad : {"", "-", "--1", "8000000000000000", "ffffffffffffffff", "-x", "1-"}) {
    INFO(bad);
    CHECK_FALSE(protocol::parse_hex_i64(bad).ok());
  }
}

TEST_CASE("hex_u64 and hex_fixed", "[hex]") {
  CHECK(protocol::hex_u64(0) == "0");
  CHECK(protocol::hex_u64(0x1f) == "1f");
  CHECK(protocol::hex_u64(~std::uint64_t{0}) == "ffffffffffffffff");
  CHECK(protocol::hex_fixed(0x55555555801c, 16) == "000055555555801c");
  CHECK(protocol::hex_fixed(5, 2) == "05");
  CHECK(protocol::hex_fixed(0x1ab, 2) == "ab");
  CHECK(protocol::hex_fixed(0, 0) == "");
}
