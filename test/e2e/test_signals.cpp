// Signals: a program that dies of SIGSEGV (test/progs/crash.c writes through NULL at
// offset 16, two calls below main).
#include <catch2/catch.hpp>

#include "test/e2e/gdb_session.hpp"
#include "test/e2e/matchers.hpp"

using Catch::Matchers::Contains;
using e2e::ContainsRegex;

TEST_CASE("SIGSEGV is reported with its siginfo", "[e2e][signals]") {
  auto out = e2e::run_gdb({.program = "crash",
                           .commands = {"continue", "bt", "print $_siginfo.si_signo",
                                        "print $_siginfo._sifields._sigfault.si_addr",
                                        "info registers rip", "continue"}});
  INFO(out.transcript());
  CHECK_THAT(out.gdb, Contains("Program received signal SIGSEGV, Segmentation fault."));
  CHECK_THAT(out.gdb, ContainsRegex(R"(#0  (0x[0-9a-f]+ in )?store \(r=0x0, v=3\) at)"));
  CHECK_THAT(out.gdb, ContainsRegex(R"(#1  0x[0-9a-f]+ in update \(r=0x[0-9a-f]+, depth=3\))"));
  CHECK_THAT(out.gdb, ContainsRegex(R"(#2  0x[0-9a-f]+ in main \(\))"));
  CHECK_THAT(out.gdb, ContainsRegex(R"(\$1 = 11\n)"));
  CHECK_THAT(out.gdb, ContainsRegex(R"(\$2 = \(void \*\) 0x10\n)"));
  CHECK_THAT(out.gdb, ContainsRegex(R"(rip +0x[0-9a-f]+ +0x[0-9a-f]+ <store\+\d+>)"));
  CHECK_THAT(out.gdb, Contains("Program terminated with signal SIGSEGV, Segmentation fault."));
  CHECK_THAT(out.server_out, Contains("about to crash"));
  CHECK_THAT(out.server_out, !Contains("not reached"));
}
