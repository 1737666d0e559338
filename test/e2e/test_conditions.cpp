// Target-side breakpoint conditions (ConditionalBreakpoints+, `Z0,...;X` agent expressions)
// with real GDB and `set breakpoint condition-evaluation target`: a false condition costs no
// stop reply; a condition the server cannot evaluate (unmapped memory, division by zero)
// stops, and GDB, which evaluates it again, says why.
#include <catch2/catch.hpp>

#include "test/e2e/gdb_session.hpp"
#include "test/e2e/matchers.hpp"

using Catch::Matchers::Contains;
using e2e::ContainsRegex;

TEST_CASE("a target-side condition: only the hit where it holds reaches GDB", "[e2e][conditions]") {
  // square() runs for x = 1..4; the condition holds for x == 3 alone.
  auto out = e2e::run_gdb({.program = "simple",
                           .commands = {"set breakpoint condition-evaluation target", "break square if x == 3",
                                        "continue", "print x", "info breakpoints", "continue"},
                           .remote_debug = true});
  INFO(out.transcript());
  CHECK_THAT(out.server_err, ContainsRegex(R"(<- \$Z0,[0-9a-f]+,1;X[0-9a-f]+,[0-9a-f]+)"));
  CHECK_THAT(out.gdb, Contains("Breakpoint 1, square (x=3)"));
  CHECK_THAT(out.gdb, Contains("$1 = 3"));
  CHECK_THAT(out.gdb, Contains("breakpoint already hit 1 time"));  // GDB saw one hit of four
  // (+ 2: the dynamic linker's breakpoint)
  CHECK(e2e::occurrences(out.server_err, "-> $T05swbreak") <= e2e::occurrences(out.gdb, "Breakpoint 1, square") + 2);
  CHECK_THAT(out.gdb, ContainsRegex(R"(\[Inferior 1 \(process \d+\) exited with code 07\])"));
}

TEST_CASE("a target-side condition that cannot be evaluated stops, and GDB says why", "[e2e][conditions]") {
  const std::string condition = GENERATE("*(int *) 0 == 1", "x / (x - x) == 1");
  INFO("condition: " << condition);
  auto out = e2e::run_gdb({.program = "simple",
                           .commands = {"set breakpoint condition-evaluation target", "break square if " + condition,
                                        "continue", "print x", "delete", "continue"},
                           .remote_debug = true});
  INFO(out.transcript());
  CHECK_THAT(out.server_err, ContainsRegex(R"(<- \$Z0,[0-9a-f]+,1;X)"));
  // GDB 16 words it "Error in testing condition for breakpoint 1:".
  CHECK_THAT(out.gdb, ContainsRegex("Error in testing (breakpoint condition|condition for breakpoint 1)"));
  CHECK_THAT(out.gdb, Contains("$1 = 1"));  // the first call stopped
  CHECK_THAT(out.gdb, ContainsRegex(R"(\[Inferior 1 \(process \d+\) exited with code 07\])"));
}

TEST_CASE("two conditional breakpoints at one address: both conditions sent together, either stops",
          "[e2e][conditions]") {
  auto out = e2e::run_gdb({.program = "simple",
                           .commands = {"set breakpoint condition-evaluation target", "break square if x == 2",
                                        "break square if x == 4", "continue", "print x", "continue", "print x",
                                        "continue"},
                           .remote_debug = true});
  INFO(out.transcript());
  // GDB concatenates a location's conditions with no separator: ;X..,..X..,..
  CHECK_THAT(out.server_err, ContainsRegex(R"(<- \$Z0,[0-9a-f]+,1;X[0-9a-f]+,[0-9a-f]+X[0-9a-f]+,[0-9a-f]+)"));
  CHECK_THAT(out.gdb, ContainsRegex(R"(Breakpoint [12], square \(x=2\)[\s\S]*\$1 = 2\n)"));
  CHECK_THAT(out.gdb, ContainsRegex(R"(Breakpoint [12], square \(x=4\)[\s\S]*\$2 = 4\n)"));
  CHECK_THAT(out.gdb, ContainsRegex(R"(\[Inferior 1 \(process \d+\) exited with code 07\])"));
}

TEST_CASE("a false condition is passed out of line: no step in place, no stop of the other threads",
          "[e2e][conditions]") {
  // square()'s breakpoint sits on a load from the frame, line 20's on `global_counter++` (a
  // load relative to rip, rebased in the copy): each copy runs in a slot at the end of the
  // program's code and jumps back, so the server never steps over the int3 in place.
  auto out = e2e::run_gdb({.program = "simple",
                           .commands = {"set breakpoint condition-evaluation target", "break square if x == 99",
                                        "break simple.c:20 if i == 99", "continue"},
                           .server_flags = {"--debug=ptrace"}});
  INFO(out.transcript());
  CHECK_THAT(out.server_err, Contains("out-of-line slots in"));
  CHECK_THAT(out.server_err, !ContainsRegex(R"(stepping over int3 at 0x5)"));
  CHECK_THAT(out.server_err, ContainsRegex(R"((conditions at 0x[0-9a-f]+ false: going on[\s\S]*){8})"));
  CHECK_THAT(out.server_out, Contains("sum=30 counter=4"));  // the rebased copies counted right
  CHECK_THAT(out.gdb, ContainsRegex(R"(\[Inferior 1 \(process \d+\) exited with code 07\])"));
}

TEST_CASE("four threads pass a false condition out of line thousands of times; their results stay right",
          "[e2e][conditions][threads]") {
  // workers checks its own checksums every round: an instruction its copy ran wrong would show.
  auto out = e2e::run_gdb({.program = "workers",
                           .commands = {"set breakpoint condition-evaluation target", "break checksum if seed == 99",
                                        "continue"},
                           .args = {"1"},
                           .timeout = std::chrono::seconds(60)});
  INFO(out.transcript());
  CHECK_THAT(out.server_out, ContainsRegex(R"(workers ok [1-9]\d{2,})"));  // hundreds of rounds at least
  CHECK_THAT(out.gdb, ContainsRegex(R"(\[Inferior 1 \(process \d+\) exited normally\])"));
}

TEST_CASE("a copy that faults in its slot is reported where the original lives", "[e2e][conditions]") {
  // store()'s `mov %edx,0x10(%rax)` writes through NULL: under a false condition it runs as a
  // copy, faults there, and GDB must see the fault in store(), at that instruction.
  auto out = e2e::run_gdb({.program = "crash",
                           .commands = {"set breakpoint condition-evaluation target", "break *(store + 18) if $rax == 1",
                                        "continue", "x/i $pc", "bt 1", "continue"}});
  INFO(out.transcript());
  CHECK_THAT(out.gdb, Contains("Program received signal SIGSEGV"));
  CHECK_THAT(out.gdb, ContainsRegex(R"(=> 0x[0-9a-f]+ <store\+18>:\s+mov\s+%edx,0x10\(%rax\))"));
  CHECK_THAT(out.gdb, ContainsRegex(R"(#0 +(0x[0-9a-f]+ in )?store \(r=0x0, v=3\))"));
  CHECK_THAT(out.gdb, Contains("Program terminated with signal SIGSEGV"));
}
