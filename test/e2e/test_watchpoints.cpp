// Hardware breakpoints (Z1) and watchpoints (Z2 write, Z3 read, Z4 access) on a variable that
// several threads write (test/progs/mt.c, mode watch: 4 writers add 1..4 three times each,
// then a reader copies the total, 30).
#include <catch2/catch.hpp>

#include <regex>

#include "test/e2e/gdb_session.hpp"
#include "test/e2e/matchers.hpp"
#include "test/support/skip.hpp"
#include "test/support/debug_registers_probe.hpp"

using Catch::Matchers::Contains;
using e2e::ContainsRegex;

TEST_CASE("hbreak: a hardware breakpoint stops the program", "[e2e][watch]") {
  REQUIRE_DEBUG_REGISTERS();
  auto out = e2e::run_gdb({.program = "mt", .commands = {"hbreak checkpoint", "continue", "bt 1",
                                                         "continue", "continue"},
                           .args = {"life"},
                           .remote_debug = true});
  INFO(out.transcript());
  CHECK_THAT(out.gdb, Contains("Hardware assisted breakpoint 1 at"));
  CHECK_THAT(out.gdb, ContainsRegex(R"(hit Breakpoint 1, checkpoint \(n=1\))"));
  CHECK_THAT(out.gdb, ContainsRegex(R"(hit Breakpoint 1, checkpoint \(n=2\))"));
  CHECK_THAT(out.server_err, ContainsRegex(R"(-> \$T05hwbreak:;)"));
  CHECK_THAT(out.gdb, Contains("exited normally"));
}

TEST_CASE("watch: every write by any thread is reported with old and new value", "[e2e][watch]") {
  REQUIRE_DEBUG_REGISTERS();
  auto out = e2e::run_gdb({.program = "mt",
                           .commands = {"watch shared", "continue", "continue", "continue",
                                        "delete", "continue"},
                           .args = {"watch"},
                           .remote_debug = true});
  INFO(out.transcript());
  CHECK_THAT(out.gdb, Contains("Hardware watchpoint 1: shared"));
  const std::regex hit(R"(hit Hardware watchpoint 1: shared)");
  CHECK(std::distance(std::sregex_iterator(out.gdb.begin(), out.gdb.end(), hit), std::sregex_iterator()) == 3);
  CHECK_THAT(out.gdb, ContainsRegex(R"(Old value = 0\nNew value = [1-4]\n)"));
  CHECK_THAT(out.server_err, ContainsRegex(R"(<- \$Z2,[0-9a-f]+,8)"));
  CHECK_THAT(out.server_err, ContainsRegex(R"(-> \$T05watch:[0-9a-f]+;)"));
  CHECK_THAT(out.gdb, Contains("exited normally"));
  CHECK_THAT(out.server_out, Contains("shared=30 observed=30"));
}

TEST_CASE("rwatch (Z3): reads are reported, writes are not", "[e2e][watch]") {
  REQUIRE_DEBUG_REGISTERS();
  auto out = e2e::run_gdb({.program = "mt",
                           .commands = {"break run_watch", "continue", "rwatch shared", "continue",
                                        "continue", "print shared", "delete", "continue"},
                           .args = {"watch"},
                           .remote_debug = true});
  INFO(out.transcript());
  CHECK_THAT(out.server_err, ContainsRegex(R"(<- \$Z3,[0-9a-f]+,8[^\n]*\n[^\n]*-> \$OK)"));
  CHECK_THAT(out.server_err, ContainsRegex(R"(-> \$T05rwatch:[0-9a-f]+;)"));
  CHECK_THAT(out.server_err, !Contains("$Z4"));
  // Each writer reads `shared` (+=) before writing it: the value shown is the one read, and the
  // stop is on the read, before the store (the line of the +=, not the unlock after it).
  CHECK_THAT(out.gdb, ContainsRegex(R"(hit Hardware read watchpoint 2: shared\n\nValue = 0\n)"));
  CHECK_THAT(out.gdb, ContainsRegex(R"(hit Hardware read watchpoint 2: shared\n\nValue = [1-4]\n)"));
  CHECK_THAT(out.gdb, !Contains("Old value"));
  CHECK_THAT(out.gdb, ContainsRegex(R"(\n\d+\t    shared \+= \(long\)arg;)"));
  CHECK_THAT(out.gdb, Contains("exited normally"));
  CHECK_THAT(out.server_out, Contains("shared=30 observed=30"));
}

TEST_CASE("rwatch and watch on one variable: the read, then the write, each reported in turn",
          "[e2e][watch]") {
  REQUIRE_DEBUG_REGISTERS();
  // global_counter++ loads, then stores: the store hits both debug registers at once (x86 has
  // no read-only watchpoint, so rwatch traps writes too); the write watchpoint is reported,
  // not lost behind the read one that saw its value change (gdb.base/watch-read.exp).
  auto out = e2e::run_gdb({.program = "simple",
                           .commands = {"break sum_squares", "continue", "rwatch global_counter",
                                        "watch global_counter", "continue", "continue", "continue", "continue",
                                        "delete", "continue"}});
  INFO(out.transcript());
  CHECK_THAT(out.gdb, ContainsRegex(R"(Hardware read watchpoint 2: global_counter\n\nValue = 0\n[\s\S]*)"
                                    R"(Hardware watchpoint 3: global_counter\n\nOld value = 0\nNew value = 1\n[\s\S]*)"
                                    R"(Hardware read watchpoint 2: global_counter\n\nValue = 1\n[\s\S]*)"
                                    R"(Hardware watchpoint 3: global_counter\n\nOld value = 1\nNew value = 2\n)"));
  CHECK_THAT(out.gdb, ContainsRegex(R"(\[Inferior 1 \(process \d+\) exited with code 07\])"));
}

TEST_CASE("awatch: reads and writes both reported", "[e2e][watch]") {
  REQUIRE_DEBUG_REGISTERS();
  auto out = e2e::run_gdb({.program = "mt",
                           .commands = {"awatch shared", "continue", "continue", "delete", "continue"},
                           .args = {"watch"},
                           .remote_debug = true});
  INFO(out.transcript());
  CHECK_THAT(out.server_err, ContainsRegex(R"(-> \$T05awatch:[0-9a-f]+;)"));
  // First the read of 0 by the +=, then its write.
  CHECK_THAT(out.gdb, ContainsRegex(R"(access \(read/write\) watchpoint 1: shared\n\nValue = 0\n)"));
  CHECK_THAT(out.gdb, ContainsRegex(R"(access \(read/write\) watchpoint 1: shared\n\nOld value = 0\nNew value = [1-4]\n)"));
  CHECK_THAT(out.gdb, Contains("exited normally"));
}

TEST_CASE("a fifth debug register is refused with an error, the four others work", "[e2e][watch]") {
  REQUIRE_DEBUG_REGISTERS();
  auto out = e2e::run_gdb({.program = "mt",
                           .commands = {"break run_watch", "continue", "watch shared", "watch observed",
                                        "watch usr1_count", "watch usr2_count", "watch rounds",
                                        "continue", "delete 6", "continue", "delete", "continue"},
                           .args = {"watch"},
                           .remote_debug = true});
  INFO(out.transcript());
  CHECK_THAT(out.gdb, Contains("Could not insert hardware watchpoint"));
  CHECK_THAT(out.server_err, ContainsRegex(R"(<- \$Z2,[0-9a-f]+,[48][^\n]*\n[^\n]*-> \$E[0-9a-f]{2})"));
  CHECK_THAT(out.gdb, ContainsRegex(R"(hit Hardware watchpoint 2: shared)"));
  CHECK_THAT(out.gdb, Contains("exited normally"));
}

TEST_CASE("watchpoint lengths: 2 bytes, and an unaligned 12-byte range the server splits", "[e2e][watch]") {
  REQUIRE_DEBUG_REGISTERS();
  auto out = e2e::run_gdb({.program = "mt",
                           .commands = {"break run_watch", "continue",
                                        "watch *(short*)&shared", "continue", "delete",
                                        "watch -l *(char(*)[12])((char*)&shared - 4)", "continue",
                                        "delete", "continue"},
                           .args = {"watch"},
                           .remote_debug = true});
  INFO(out.transcript());
  CHECK_THAT(out.server_err, ContainsRegex(R"(<- \$Z2,[0-9a-f]+,2)"));
  CHECK_THAT(out.server_err, ContainsRegex(R"(<- \$Z2,[0-9a-f]+,c[^\n]*\n[^\n]*-> \$OK)"));
  CHECK_THAT(out.gdb, ContainsRegex(R"(hit Hardware watchpoint 2: \*\(short\*\)&shared\n\nOld value = 0\nNew value = [1-4]\n)"));
  CHECK_THAT(out.gdb, ContainsRegex(R"(hit Hardware watchpoint 3: -location)"));
  CHECK_THAT(out.gdb, Contains("exited normally"));
}
