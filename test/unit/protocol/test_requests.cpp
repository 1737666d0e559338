// Request parsers: table-driven good and bad bodies for each packet family.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "protocol/requests.hpp"

using base::Errc;
using protocol::Bytes;
using protocol::ThreadId;

namespace {

// Every bad input must give Errc::malformed with a detail.
template <class Parse>
void check_bad(Parse parse, std::initializer_list<std::string> bodies) {
  for (const auto& body : bodies) {
    INFO("body: " << body);
    auto r = parse(body);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().code == Errc::malformed);
    CHECK_FALSE(r.error().detail.empty());
  }
}

Bytes bytes(std::string_view s) { return Bytes(s.begin(), s.end()); }

}  // namespace

TEST_CASE("parse_qsupported", "[requests]") {
  auto r = protocol::parse_qsupported(":multiprocess+;swbreak+;xmlRegisters=i386");
  REQUIRE(r.ok());
  CHECK(*r == std::vector<std::string>{"multiprocess+", "swbreak+", "xmlRegisters=i386"});
  CHECK(protocol::parse_qsupported("")->empty());
  CHECK(protocol::parse_qsupported(":")->empty());
  CHECK(*protocol::parse_qsupported(":a+;") == std::vector<std::string>{"a+"});
  check_bad(protocol::parse_qsupported, {"x", ";a+"});
}

TEST_CASE("parse_set_thread", "[requests]") {
  auto r = protocol::parse_set_thread("gp1.2");
  REQUIRE(r.ok());
  CHECK(r->op == 'g');
  CHECK(r->thread == ThreadId{1, 2});
  r = protocol::parse_set_thread("c-1");
  REQUIRE(r.ok());
  CHECK(r->op == 'c');
  CHECK(r->thread == ThreadId{ThreadId::kAny, ThreadId::kAll});
  CHECK(protocol::parse_set_thread("gp0.0")->thread == ThreadId{0, 0});
  check_bad(protocol::parse_set_thread, {"", "g", "x1", "gp", "cp-1.-2", "gp1.2x", "G1"});
}

TEST_CASE("parse_tls_address", "[requests]") {
  auto r = protocol::parse_tls_address("p1.2,10,7ffff7ff0000");
  REQUIRE(r.ok());
  CHECK(r->thread == ThreadId{1, 2});
  CHECK(r->offset == 0x10);
  CHECK(r->link_map == 0x7ffff7ff0000);
  CHECK(protocol::parse_tls_address("2a,0,0")->thread == ThreadId{ThreadId::kAny, 0x2a});
  check_bad(protocol::parse_tls_address, {"", "1", "1,2", "1,2,", "x,1,2", "1,zz,2", "1,2,3,4"});
}

TEST_CASE("parse_catch_syscalls: off, any, a list; unknown modes rejected", "[requests]") {
  auto off = protocol::parse_catch_syscalls("0");
  REQUIRE(off.ok());
  CHECK_FALSE(off->enabled);
  auto any = protocol::parse_catch_syscalls("1");
  REQUIRE(any.ok());
  CHECK(any->enabled);
  CHECK(any->numbers.empty());
  auto some = protocol::parse_catch_syscalls("1;1;3b;e7");
  REQUIRE(some.ok());
  CHECK(some->enabled);
  CHECK(some->numbers == std::vector<int>{1, 0x3b, 0xe7});
  check_bad(protocol::parse_catch_syscalls, {"", "2", "01", "1x", "1;", "1;zz", "1;1;;2", "0;1", "1;100000000"});
}

TEST_CASE("parse_thread_options: masks for every thread or the ones named, in order", "[requests]") {
  // What GDB 16 sends before stepping a thread over a clone (gdbserver's log).
  auto r = protocol::parse_thread_options("0;3:p791a.791a");
  REQUIRE(r.ok());
  REQUIRE(r->size() == 2);
  CHECK((*r)[0].options == 0);
  CHECK_FALSE((*r)[0].thread.has_value());
  CHECK((*r)[1].options == 3);
  CHECK((*r)[1].thread == ThreadId{0x791a, 0x791a});
  auto all = protocol::parse_thread_options("2");
  REQUIRE(all.ok());
  CHECK(all->size() == 1);
  CHECK((*all)[0].options == 2);
  CHECK(protocol::parse_thread_options("1:p2a.-1")->front().thread == ThreadId{0x2a, ThreadId::kAll});
  check_bad(protocol::parse_thread_options, {"", ";", "3;", ";3", "zz", "3:", "3:pzz", "1;;2", "100000000"});
}

TEST_CASE("parse_read_mem", "[requests]") {
  auto r = protocol::parse_read_mem("401000,4");
  REQUIRE(r.ok());
  CHECK(r->addr == 0x401000);
  CHECK(r->len == 4);
  CHECK(protocol::parse_read_mem("7ffff7ffe2e0,2000")->len == 0x2000);
  CHECK(protocol::parse_read_mem("ffffffffffffffff,1")->addr == ~std::uint64_t{0});
  CHECK(protocol::parse_read_mem("0,0")->len == 0);
  check_bad(protocol::parse_read_mem, {"", ",", "1000", "1000,", ",4", "10g0,4", "1000,4x", "1000,4,",
                                       "ffffffffffffffff,2", "10000000000000000,1", "1000;4"});
  auto bad = protocol::parse_read_mem("10z0,4");
  CHECK(bad.error().detail == "bad hex digit in address");
}

TEST_CASE("parse_write_mem_hex", "[requests]") {
  auto r = protocol::parse_write_mem_hex("1000,4:0102abcd");
  REQUIRE(r.ok());
  CHECK(r->addr == 0x1000);
  CHECK(r->data == Bytes{1, 2, 0xab, 0xcd});
  CHECK(protocol::parse_write_mem_hex("1000,0:")->data.empty());
  check_bad(protocol::parse_write_mem_hex,
            {"", "1000,4", "1000,4:010203", "1000,4:0102030405", "1000,4:010203g4", "1000,2:010", "1000:01",
             "x,1:01", "ffffffffffffffff,2:0102"});
}

TEST_CASE("parse_write_mem_binary", "[requests]") {
  auto r = protocol::parse_write_mem_binary("7fffffffe4ff,1:\xcc");
  REQUIRE(r.ok());
  CHECK(r->addr == 0x7fffffffe4ff);
  CHECK(r->data == Bytes{0xcc});
  // GDB's probe.
  CHECK(protocol::parse_write_mem_binary("1000,0:")->data.empty());
  // Escapes undone; ':' and ',' inside the data are data.
  r = protocol::parse_write_mem_binary("1000,5:}\x03}]:,}\x0a");
  REQUIRE(r.ok());
  CHECK(r->data == bytes("#}:,*"));
  check_bad(protocol::parse_write_mem_binary,
            {"", "1000,1", "1000,2:a", "1000,1:ab", "1000,1:}", "1000,1:a}", "1000:a"});
}

TEST_CASE("parse_read_reg and parse_write_reg", "[requests]") {
  CHECK(*protocol::parse_read_reg("10") == 0x10);
  CHECK(*protocol::parse_read_reg("0") == 0);
  CHECK(*protocol::parse_read_reg("fff") == 0xfff);
  check_bad(protocol::parse_read_reg, {"", "1000", "ffffffffffffffff", "x", "10;", "-1"});

  auto w = protocol::parse_write_reg("5=0500000000000000");
  REQUIRE(w.ok());
  CHECK(w->regno == 5);
  CHECK(w->value == Bytes{5, 0, 0, 0, 0, 0, 0, 0});
  CHECK(protocol::parse_write_reg("39=ffffffffffffffff")->regno == 0x39);
  check_bad(protocol::parse_write_reg, {"", "5", "5=", "=00", "5=0", "5=zz", "1000=00", "5=00=00"});
}

TEST_CASE("parse_breakpoint", "[requests]") {
  struct Good {
    const char* body;
    int type;
    std::uint64_t addr;
    int kind;
  };
  const Good good[] = {
      {"0,7ffff7fcc060,1", 0, 0x7ffff7fcc060, 1},
      {"1,401000,1", 1, 0x401000, 1},
      {"2,55555555801c,4", 2, 0x55555555801c, 4},
      {"4,1000,8", 4, 0x1000, 8},
      {"0,401000,1;X3,220405", 0, 0x401000, 1},
      {"0,401000,1;cmds:0,X3,220405", 0, 0x401000, 1},
  };
  for (const auto& g : good) {
    INFO(g.body);
    auto r = protocol::parse_breakpoint(g.body);
    REQUIRE(r.ok());
    CHECK(r->type == g.type);
    CHECK(r->addr == g.addr);
    CHECK(r->kind == g.kind);
  }
  check_bad(protocol::parse_breakpoint, {"", "0", "0,1000", "0,1000,", "5,1000,1", "0,x,1", "0,1000,1x",
                                         "0,1000,1,2", ",1000,1", "0,,1", "0,ffffffffffffffff,2",
                                         "0,1000,10000"});
}

TEST_CASE("parse_breakpoint: conditions, concatenated as GDB sends them, then commands", "[requests]") {
  // Two conditions of two breakpoints at one address (gdb.base/pending.exp): no separator.
  auto two = protocol::parse_breakpoint("0,7ffff7fbc124,1;X3,220427X4,22012227;cmds:0,X3,220405");
  REQUIRE(two.ok());
  REQUIRE(two->conditions.size() == 2);
  CHECK(two->conditions[0] == protocol::Bytes{0x22, 0x04, 0x27});
  CHECK(two->conditions[1] == protocol::Bytes{0x22, 0x01, 0x22, 0x27});
  auto none = protocol::parse_breakpoint("0,401000,1");
  REQUIRE(none.ok());
  CHECK(none->conditions.empty());
  check_bad(protocol::parse_breakpoint, {"0,1000,1;X", "0,1000,1;X3", "0,1000,1;X3,2204", "0,1000,1;X3,22zz27",
                                         "0,1000,1;X2,2204Y", "0,1000,1;Q", "0,1000,1;X2,2204;X1,27",
                                         "0,1000,1;X2000,00"});
}

TEST_CASE("parse_breakpoint: commands (agent-style dprintf) after the conditions, persistent or not",
          "[requests]") {
  // dprintf foo,"x=%d\n",x with `set dprintf-style agent`: no condition, one command.
  auto one = protocol::parse_breakpoint("0,401136,1;cmds:1,X5,2201340027");
  REQUIRE(one.ok());
  CHECK(one->conditions.empty());
  REQUIRE(one->commands.size() == 1);
  CHECK(one->commands[0] == protocol::Bytes{0x22, 0x01, 0x34, 0x00, 0x27});
  CHECK(one->persist);
  auto both = protocol::parse_breakpoint("0,401136,1;X3,220427;cmds:0,X1,27X2,2227");
  REQUIRE(both.ok());
  CHECK(both->conditions.size() == 1);
  CHECK(both->commands.size() == 2);
  CHECK_FALSE(both->persist);
  check_bad(protocol::parse_breakpoint, {"0,1000,1;cmds:", "0,1000,1;cmds:1", "0,1000,1;cmds:2,X1,27",
                                         "0,1000,1;cmds:1,X1,2", "0,1000,1;cmds:1,Y1,27",
                                         "0,1000,1;cmds:1,X1,27;X1,27", "0,1000,1;cmds:0,X1,27;cmds:0,X1,27"});
}

TEST_CASE("parse_vcont: forms GDB sends", "[requests]") {
  auto r = protocol::parse_vcont(";c:p39d5.-1");
  REQUIRE(r.ok());
  REQUIRE(r->size() == 1);
  CHECK((*r)[0].action == 'c');
  CHECK((*r)[0].thread == ThreadId{0x39d5, ThreadId::kAll});

  r = protocol::parse_vcont(";c:p1.-1;s:p1.1");
  REQUIRE(r.ok());
  REQUIRE(r->size() == 2);
  CHECK((*r)[1].action == 's');
  CHECK((*r)[1].thread == ThreadId{1, 1});

  r = protocol::parse_vcont(";C0b:p1.1;c");
  REQUIRE(r.ok());
  REQUIRE(r->size() == 2);
  CHECK((*r)[0].action == 'c');
  CHECK((*r)[0].gdb_signal == 0xb);
  CHECK((*r)[1].action == 'c');
  CHECK((*r)[1].gdb_signal == 0);
  CHECK_FALSE((*r)[1].thread.has_value());

  r = protocol::parse_vcont(";r5555,5566:p1.1;c:p1.-1");
  REQUIRE(r.ok());
  REQUIRE(r->size() == 2);
  CHECK((*r)[0].action == 'r');
  CHECK((*r)[0].range_start == 0x5555);
  CHECK((*r)[0].range_end == 0x5566);
  CHECK((*r)[0].thread == ThreadId{1, 1});

  r = protocol::parse_vcont(";S05:2a");
  REQUIRE(r.ok());
  CHECK((*r)[0].action == 's');
  CHECK((*r)[0].gdb_signal == 5);
  CHECK((*r)[0].thread == ThreadId{ThreadId::kAny, 0x2a});

  r = protocol::parse_vcont(";t");
  REQUIRE(r.ok());
  CHECK((*r)[0].action == 't');
  CHECK(protocol::parse_vcont(";r1000,1000:p1.1").ok());  // empty range = plain step
}

TEST_CASE("parse_vcont: malformed", "[requests]") {
  check_bad(protocol::parse_vcont,
            {"", ";", "c", ";;c", ";c;", ";x", ";cc", ";C", ";Cxx", ";C100", ";c:", ";c:p", ";c:p1.",
             ";r1000", ";r1000,", ";r,1000", ";r2000,1000", ";c:p-1.-2", ";s:p1.1x", ";:p1.1", ";c;;s"});
}

TEST_CASE("parse_legacy_resume", "[requests]") {
  auto r = protocol::parse_legacy_resume("", false);
  REQUIRE(r.ok());
  CHECK_FALSE(r->addr.has_value());
  CHECK(r->gdb_signal == 0);
  r = protocol::parse_legacy_resume("401000", false);
  REQUIRE(r.ok());
  CHECK(r->addr == std::optional<std::uint64_t>{0x401000});
  r = protocol::parse_legacy_resume("0b", true);
  REQUIRE(r.ok());
  CHECK(r->gdb_signal == 0xb);
  CHECK_FALSE(r->addr.has_value());
  r = protocol::parse_legacy_resume("0b;401000", true);
  REQUIRE(r.ok());
  CHECK(r->gdb_signal == 0xb);
  CHECK(r->addr == std::optional<std::uint64_t>{0x401000});

  auto without = [](std::string_view b) { return protocol::parse_legacy_resume(b, false); };
  auto with = [](std::string_view b) { return protocol::parse_legacy_resume(b, true); };
  check_bad(without, {"x", "401000;", "0b;401000", "10000000000000000"});
  check_bad(with, {"", "x", "0b;", "0b;x", "100", ";401000", "0b;1;2"});
}

TEST_CASE("parse_xfer_read", "[requests]") {
  struct Good {
    const char* body;
    const char* object;
    const char* annex;
    std::uint64_t offset;
    std::uint64_t length;
  };
  const Good good[] = {
      {"features:read:target.xml:0,1000", "features", "target.xml", 0, 0x1000},
      {"features:read:target.xml:3000,1000", "features", "target.xml", 0x3000, 0x1000},
      {"auxv:read::0,1000", "auxv", "", 0, 0x1000},
      {"btrace:read:delta:0,1000", "btrace", "delta", 0, 0x1000},
      {"exec-file:read:3058:0,1000", "exec-file", "3058", 0, 0x1000},
      {"libraries-svr4:read:start=7ffff7ffe2e0;prev=0:0,1000", "libraries-svr4", "start=7ffff7ffe2e0;prev=0",
       0, 0x1000},
  };
  for (const auto& g : good) {
    INFO(g.body);
    auto r = protocol::parse_xfer_read(g.body);
    REQUIRE(r.ok());
    CHECK(r->object == g.object);
    CHECK(r->annex == g.annex);
    CHECK(r->offset == g.offset);
    CHECK(r->length == g.length);
  }
  check_bad(protocol::parse_xfer_read,
            {"", "auxv", "auxv:read", "auxv:read:", "auxv:read::", "auxv:read::0", "auxv:read::0,",
             "auxv:read::,1000", "auxv:write::0,1000", ":read::0,1000", "auxv:read::0,1000x",
             "auxv:read::x,1000", "auxv:read::0,1000,1"});
}

TEST_CASE("parse_xfer_write", "[requests]") {
  auto r = protocol::parse_xfer_write("siginfo:write::0:ab}]:");
  REQUIRE(r.ok());
  CHECK(r->object == "siginfo");
  CHECK(r->annex == "");
  CHECK(r->offset == 0);
  CHECK(r->data == bytes("ab}:"));
  r = protocol::parse_xfer_write("siginfo:write::10:");
  REQUIRE(r.ok());
  CHECK(r->offset == 0x10);
  CHECK(r->data.empty());
  check_bad(protocol::parse_xfer_write, {"", "siginfo", "siginfo:write", "siginfo:write::", "siginfo:write::0",
                                         "siginfo:read::0:ab", "siginfo:write::x:ab", "siginfo:write::0:a}",
                                         ":write::0:ab"});
}

TEST_CASE("parse_signal_list", "[requests]") {
  CHECK(*protocol::parse_signal_list("e;10;14;") == std::vector<int>{0xe, 0x10, 0x14});
  CHECK(*protocol::parse_signal_list("e;10;14") == std::vector<int>{0xe, 0x10, 0x14});
  CHECK(protocol::parse_signal_list("")->empty());
  CHECK(*protocol::parse_signal_list("0;1;97;") == std::vector<int>{0, 1, 0x97});
  check_bad(protocol::parse_signal_list, {";", "e;;10", "x", "e;1g", "100", ":e;10", "-1"});
}

TEST_CASE("parse_vrun", "[requests]") {
  CHECK(*protocol::parse_vrun(";2f62696e2f6c73;2d6c;") == std::vector<std::string>{"/bin/ls", "-l", ""});
  CHECK(*protocol::parse_vrun(";2f62696e2f6c73") == std::vector<std::string>{"/bin/ls"});
  CHECK(*protocol::parse_vrun(";") == std::vector<std::string>{""});
  CHECK(*protocol::parse_vrun(";;61") == std::vector<std::string>{"", "a"});
  check_bad(protocol::parse_vrun, {"", "2f", ";2", ";2g", ";61;6", ";6100"});
}

TEST_CASE("parse_optional_pid", "[requests]") {
  CHECK_FALSE(protocol::parse_optional_pid("")->has_value());
  CHECK(**protocol::parse_optional_pid(";1a") == 0x1a);
  CHECK(**protocol::parse_optional_pid(":1a") == 0x1a);
  CHECK(**protocol::parse_optional_pid(";39d5") == 0x39d5);
  check_bad(protocol::parse_optional_pid, {";", ":", "1a", ";1a;", ";x", ",1a", ";-1", ";100000000"});
}

TEST_CASE("parse_qrcmd", "[requests]") {
  CHECK(*protocol::parse_qrcmd(",68656c70") == "help");
  CHECK(*protocol::parse_qrcmd(",") == "");
  check_bad(protocol::parse_qrcmd, {"", "68656c70", ",6", ",zz", ":68"});
}

TEST_CASE("parse_vfile_open", "[requests]") {
  auto r = protocol::parse_vfile_open("6a7573742070726f62696e67,0,1c0");
  REQUIRE(r.ok());
  CHECK(r->path == "just probing");
  CHECK(r->gdb_flags == 0);
  CHECK(r->mode == 0x1c0);
  r = protocol::parse_vfile_open("2f746d702f78,601,1a4");
  REQUIRE(r.ok());
  CHECK(r->path == "/tmp/x");
  CHECK(r->gdb_flags == 0x601);
  CHECK(r->mode == 0x1a4);
  check_bad(protocol::parse_vfile_open, {"", "2f", "2f,0", "2f,0,", "2,0,0", "2f,x,0", "2f,0,x", "2f,0,0,0",
                                         "2f00,0,0", "2f,10000,0"});
}

TEST_CASE("parse_vfile_pread and parse_vfile_pwrite", "[requests]") {
  auto r = protocol::parse_vfile_pread("3,47ff,1000");
  REQUIRE(r.ok());
  CHECK(r->fd == 3);
  CHECK(r->count == 0x47ff);
  CHECK(r->offset == 0x1000);
  check_bad(protocol::parse_vfile_pread, {"", "3", "3,1", "3,1,", "x,1,0", "3,1,0,", "-1,1,0", "80000000,1,0"});

  auto w = protocol::parse_vfile_pwrite("3,10,ab}],c");
  REQUIRE(w.ok());
  CHECK(w->fd == 3);
  CHECK(w->offset == 0x10);
  CHECK(w->data == bytes("ab},c"));
  CHECK(protocol::parse_vfile_pwrite("3,0,")->data.empty());
  check_bad(protocol::parse_vfile_pwrite, {"", "3", "3,0", "x,0,a", "3,x,a", "3,0,a}"});
}

TEST_CASE("parse_vfile_number and parse_vfile_path", "[requests]") {
  CHECK(*protocol::parse_vfile_number("3") == 3);
  CHECK(*protocol::parse_vfile_number("39d5") == 0x39d5);
  CHECK(*protocol::parse_vfile_number("0") == 0);
  check_bad(protocol::parse_vfile_number, {"", "x", "3,", ":3"});
  CHECK(*protocol::parse_vfile_path("2f70726f632f312f6d617073") == "/proc/1/maps");
  check_bad(protocol::parse_vfile_path, {"2", "2g", "2f00"});
}

TEST_CASE("parse_svr4_annex: start, prev and lmid in any order; unknown names skipped; bad ones malformed") {
  auto all = protocol::parse_svr4_annex("start=7ffff7ffe2e0;prev=7ffff7ffe8b0;lmid=7ffff7ffe118");
  REQUIRE(all);
  CHECK(all->start == 0x7ffff7ffe2e0);
  CHECK(all->prev == 0x7ffff7ffe8b0);
  CHECK(all->lmid == 0x7ffff7ffe118);
  auto none = protocol::parse_svr4_annex("");
  REQUIRE(none);
  CHECK(none->start == 0);
  auto some = protocol::parse_svr4_annex("future=1;prev=10");
  REQUIRE(some);
  CHECK(some->prev == 0x10);
  CHECK_FALSE(protocol::parse_svr4_annex("start"));
  CHECK_FALSE(protocol::parse_svr4_annex("start=xyz"));
}

TEST_CASE("QAllow: GDB's permissions, each op as named; others keep theirs", "[protocol]") {
  // What GDB 13 sends for `set observer on`.
  auto changes = protocol::parse_qallow("WriteReg:0;WriteMem:0;InsertBreak:0;InsertTrace:1;InsertFastTrace:0;Stop:0");
  REQUIRE(changes);
  REQUIRE(changes->size() == 6);
  protocol::Permissions p;
  protocol::apply_permissions(*changes, p);
  CHECK_FALSE(p.write_registers);
  CHECK_FALSE(p.write_memory);
  CHECK_FALSE(p.insert_breakpoints);
  CHECK(p.insert_tracepoints);
  CHECK_FALSE(p.insert_fast_tracepoints);
  CHECK_FALSE(p.stop);
  auto some = protocol::parse_qallow("WriteMem:1;Someday:0");
  REQUIRE(some);
  protocol::apply_permissions(*some, p);
  CHECK(p.write_memory);
  CHECK_FALSE(p.write_registers);
  CHECK(protocol::parse_qallow("")->empty());
  CHECK_FALSE(protocol::parse_qallow("WriteReg"));
  CHECK_FALSE(protocol::parse_qallow("WriteReg:2"));
  CHECK_FALSE(protocol::parse_qallow(":1"));
  CHECK_FALSE(protocol::parse_qallow("WriteReg:"));
}
