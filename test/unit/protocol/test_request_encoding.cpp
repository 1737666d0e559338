// Request encoders (protocol/request_encoding.hpp) against the parsers the server uses: what
// one writes, the other reads back, field for field.
#include <catch2/catch.hpp>

#include "protocol/request_encoding.hpp"

using namespace protocol;

namespace {

// The body a route hands its parser: the packet less its name.
std::string_view body(const std::string& packet, std::size_t name_length) {
  return std::string_view(packet).substr(name_length);
}

}  // namespace

TEST_CASE("request encoders: what the parsers read back", "[encode]") {
  for (char op : {'g', 'c'}) {
    const std::string h = encode_set_thread({op, {0, 0x65}});
    auto set = parse_set_thread(body(h, 1));
    REQUIRE(set);
    CHECK(set->op == op);
    CHECK(set->thread.tid == 0x65);
  }
  auto alive = parse_thread_id(body(encode_thread_alive({0, 0x1234}), 1));
  REQUIRE(alive);
  CHECK(alive->tid == 0x1234);

  auto m = parse_read_mem(body(encode_read_mem({0x7ffff7fe4b70, 0x1000}), 1));
  REQUIRE(m);
  CHECK(m->addr == 0x7ffff7fe4b70);
  CHECK(m->len == 0x1000);
  const Bytes data{0x00, 0x7d, 0x23, 0x24, 0xff};
  auto w = parse_write_mem_hex(body(encode_write_mem_hex({0x601040, data}), 1));
  REQUIRE(w);
  CHECK(w->addr == 0x601040);
  CHECK(w->data == data);

  for (int type = 0; type <= 4; ++type) {
    for (bool insert : {true, false}) {
      auto z = parse_breakpoint(body(encode_breakpoint({.type = type, .addr = 0x401136, .kind = 8}, insert), 1));
      REQUIRE(z);
      CHECK(z->type == type);
      CHECK(z->addr == 0x401136);
      CHECK(z->kind == 8);
    }
  }

  CHECK(encode_legacy_resume('c', {}) == "c");
  CHECK(encode_legacy_resume('s', {}) == "s");
  auto c = parse_legacy_resume(body(encode_legacy_resume('c', {.gdb_signal = 0x1e}), 1), true);
  REQUIRE(c);
  CHECK(c->gdb_signal == 0x1e);
  CHECK(encode_legacy_resume('s', {.gdb_signal = 5}) == "S05");

  for (const CatchSyscalls& req : {CatchSyscalls{false, {}}, CatchSyscalls{true, {}}, CatchSyscalls{true, {0x3b, 1}}}) {
    auto back = parse_catch_syscalls(body(encode_catch_syscalls(req), std::string("QCatchSyscalls:").size()));
    REQUIRE(back);
    CHECK(back->enabled == req.enabled);
    CHECK(back->numbers == req.numbers);
  }

  auto tls = parse_tls_address(body(encode_tls_address({{0, 0x65}, 0x10, 0x7ffff7ffe190}), 12));
  REQUIRE(tls);
  CHECK(tls->thread.tid == 0x65);
  CHECK(tls->offset == 0x10);
  CHECK(tls->link_map == 0x7ffff7ffe190);

  auto x = parse_xfer_read(body(encode_xfer_read({"features", "target.xml", 0x10, 0xfff}), 6));
  REQUIRE(x);
  CHECK(x->object == "features");
  CHECK(x->annex == "target.xml");
  CHECK(x->offset == 0x10);
  CHECK(x->length == 0xfff);
}
