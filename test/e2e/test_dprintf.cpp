// dprintf with `set dprintf-style agent` (BreakpointCommands+, `Z0,...;cmds:` agent
// expressions whose printf the server runs): the server prints, the program never stops for
// GDB; with a condition, only the hits where it holds print; a printf that cannot be done is
// said, and the program goes on.
#include <catch2/catch.hpp>

#include "test/e2e/collectors.hpp"
#include "test/e2e/gdb_session.hpp"
#include "test/e2e/matchers.hpp"

using Catch::Matchers::Contains;
using e2e::ContainsRegex;

TEST_CASE("an agent-style dprintf: the server prints at every hit, GDB hears of none", "[e2e][dprintf]") {
  // square() runs for x = 1..4, global_counter counting the calls before.
  auto out = e2e::run_gdb({.program = "simple",
                           .commands = {"set dprintf-style agent",
                                        R"(dprintf square,"x=%d counter=%#x\t%c\n", x, global_counter, x + 97)",
                                        "info breakpoints", "continue"},
                           .remote_debug = true});
  INFO(out.transcript());
  CHECK_THAT(out.gdb, !Contains("Target cannot run dprintf commands"));
  CHECK_THAT(out.gdb, Contains(R"(agent-printf "x=%d counter=%#x\t%c\n", x, global_counter, x + 97)"));
  CHECK_THAT(out.server_err, ContainsRegex(R"(<- \$Z0,[0-9a-f]+,1;cmds:[01],X[0-9a-f]+,[0-9a-f]*34)"));
  // Printed by the server, in order, before the program's own line.
  CHECK_THAT(out.server_out, Contains("x=1 counter=0\tb\nx=2 counter=0x1\tc\nx=3 counter=0x2\td\n"
                                      "x=4 counter=0x3\te\nsum=30 counter=4"));
  // No stop reply for any of the four hits (+ 2: the dynamic linker's breakpoint).
  CHECK(e2e::occurrences(out.server_err, "-> $T05swbreak") <= 2);
  CHECK_THAT(out.gdb, ContainsRegex(R"(\[Inferior 1 \(process \d+\) exited with code 07\])"));
}

TEST_CASE("an agent-style dprintf with a condition prints where it holds; a breakpoint elsewhere still stops",
          "[e2e][dprintf]") {
  auto out = e2e::run_gdb({.program = "simple",
                           .commands = {"set dprintf-style agent", "set breakpoint condition-evaluation target",
                                        R"(dprintf square,"x=%d\n", x)", "condition 1 x > 2",
                                        "break sum_squares", "continue", "continue"},
                           .remote_debug = true});
  INFO(out.transcript());
  CHECK_THAT(out.server_err, ContainsRegex(R"(<- \$Z0,[0-9a-f]+,1;X[0-9a-f]+,[0-9a-f]+;cmds:)"));
  CHECK_THAT(out.gdb, Contains("Breakpoint 2, sum_squares"));
  CHECK_THAT(out.server_out, Contains("x=3\nx=4\nsum=30"));
  CHECK_THAT(out.server_out, !Contains("x=1"));
  CHECK_THAT(out.gdb, ContainsRegex(R"(\[Inferior 1 \(process \d+\) exited with code 07\])"));
}

TEST_CASE("an agent-style dprintf that cannot print (a string at an unmapped address) is said; the program "
          "goes on",
          "[e2e][dprintf]") {
  auto out = e2e::run_gdb({.program = "simple",
                           .commands = {"set dprintf-style agent", R"(dprintf square,"at %d: %s\n", x, (char *) x)",
                                        "continue"}});
  INFO(out.transcript());
  CHECK_THAT(out.server_err, Contains("warning: breakpoint command at 0x"));
  CHECK_THAT(out.server_err, Contains("agent printf: cannot read the string at 0x1"));
  CHECK(e2e::occurrences(out.server_err, "cannot read the string") == 4);
  CHECK_THAT(out.server_out, Contains("sum=30 counter=4"));
  CHECK_THAT(out.gdb, ContainsRegex(R"(\[Inferior 1 \(process \d+\) exited with code 07\])"));
}

TEST_CASE("under --btrace=dbt, BreakpointCommands is not offered: GDB prints the dprintf itself",
          "[e2e][dprintf]") {
  SKIP_IF_NOT_BUILT("dbt");
  auto out = e2e::run_gdb({.program = "simple",
                           .commands = {"set dprintf-style agent", R"(dprintf square,"x=%d\n", x)", "continue"},
                           .timeout = std::chrono::seconds(90),
                           .server_flags = {"--btrace=dbt"}});
  INFO(out.transcript());
  CHECK_THAT(out.gdb, Contains("Target cannot run dprintf commands, falling back to GDB printf"));
  CHECK_THAT(out.gdb, Contains("x=1\nx=2\nx=3\nx=4\n"));
  CHECK_THAT(out.gdb, ContainsRegex(R"(\[Inferior 1 \(process \d+\) exited with code 07\])"));
}

TEST_CASE("under --btrace=dbt, non-stop is not announced: GDB says so and nothing hangs", "[e2e][dbt]") {
  SKIP_IF_NOT_BUILT("dbt");
  // (The server used to announce QNonStop+ here and answer QNonStop:1 with E01.)
  auto out = e2e::run_gdb({.program = "simple",
                           .commands = {"info threads"},
                           .init_commands = {"set non-stop on"},
                           .timeout = std::chrono::seconds(90),
                           .server_flags = {"--btrace=dbt"}});
  INFO(out.transcript());
  CHECK_THAT(out.gdb, Contains("Non-stop mode requested, but remote does not support non-stop"));
  CHECK_FALSE(out.timed_out);
  CHECK(out.stray_processes == 0);
}
