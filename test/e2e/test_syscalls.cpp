// catch syscall (QCatchSyscalls, syscall_entry / syscall_return stop replies) with real GDB:
// the syscalls named and no others, entry then return, a return whose entry GDB stepped past,
// across vfork and exec, and under the software history collectors.
#include <catch2/catch.hpp>

#include "test/e2e/collectors.hpp"
#include "test/e2e/gdb_session.hpp"
#include "test/e2e/matchers.hpp"

using Catch::Matchers::Contains;
using e2e::ContainsRegex;

TEST_CASE("catch syscall: the entry and the return of the syscall named, its result, then the end",
          "[e2e][catch-syscall]") {
  auto out = e2e::run_gdb({.program = "simple",
                           .commands = {"catch syscall write", "continue", "print $orig_rax", "continue",
                                        "print $rax", "continue"}});
  INFO(out.transcript());
  CHECK_THAT(out.gdb, Contains("Catchpoint 1 (syscall 'write' [1])"));
  CHECK_THAT(out.gdb, Contains("Catchpoint 1 (call to syscall write)"));
  CHECK_THAT(out.gdb, Contains("$1 = 1"));
  CHECK_THAT(out.gdb, Contains("Catchpoint 1 (returned from syscall write)"));
  CHECK_THAT(out.gdb, Contains("$2 = 17"));  // "sum=30 counter=4\n"
  CHECK_THAT(out.gdb, ContainsRegex(R"(\[Inferior 1 \(process \d+\) exited with code 07\])"));
  CHECK_THAT(out.gdb, !Contains("call to syscall exit_group"));  // only the one named
}

TEST_CASE("catch syscall: every syscall when none is named; off again when deleted", "[e2e][catch-syscall]") {
  auto out = e2e::run_gdb({.program = "simple",
                           .commands = {"break main", "continue", "catch syscall", "continue", "continue",
                                        "delete 2", "continue"}});
  INFO(out.transcript());
  CHECK_THAT(out.gdb, Contains("Catchpoint 2 (any syscall)"));
  CHECK_THAT(out.gdb, ContainsRegex(R"(Catchpoint 2 \(call to syscall \w+\))"));
  CHECK_THAT(out.gdb, ContainsRegex(R"(Catchpoint 2 \(returned from syscall \w+\))"));
  CHECK_THAT(out.gdb, ContainsRegex(R"(\[Inferior 1 \(process \d+\) exited with code 07\])"));
}

TEST_CASE("catch syscall: a step from an entry passes its return; the next one caught is the next entry",
          "[e2e][catch-syscall]") {
  auto out = e2e::run_gdb({.program = "simple",
                           .commands = {"catch syscall write", "continue", "delete", "stepi",
                                        "catch syscall exit_group", "continue", "continue"}});
  INFO(out.transcript());
  CHECK_THAT(out.gdb, Contains("Catchpoint 1 (call to syscall write)"));
  CHECK_THAT(out.gdb, !Contains("returned from syscall write"));
  CHECK_THAT(out.gdb, Contains("Catchpoint 2 (call to syscall exit_group)"));
  CHECK_THAT(out.gdb, !Contains("returned from syscall exit_group"));
  CHECK_THAT(out.gdb, ContainsRegex(R"(\[Inferior 1 \(process \d+\) exited with code 07\])"));
}

TEST_CASE("catch syscall inside vfork: the first stop is vfork's return", "[e2e][catch-syscall][fork]") {
  auto out = e2e::run_gdb({.program = "forks",
                           .commands = {"catch vfork", "continue", "catch syscall", "continue", "delete",
                                        "continue"},
                           .args = {"vfork", e2e::prog_path("simple")}});
  INFO(out.transcript());
  CHECK_THAT(out.gdb, ContainsRegex(R"(Catchpoint 1 \(vforked process \d+\))"));
  CHECK_THAT(out.gdb, Contains("Catchpoint 2 (returned from syscall vfork)"));
  CHECK_THAT(out.gdb, Contains("exited normally"));
}

TEST_CASE("catch syscall execve: entry, the new program, then execve's return in it", "[e2e][catch-syscall]") {
  auto out = e2e::run_gdb({.program = "execer",
                           .commands = {"catch syscall execve", "continue", "continue", "continue", "continue"},
                           .args = {e2e::prog_path("simple")}});
  INFO(out.transcript());
  CHECK_THAT(out.gdb, Contains("Catchpoint 1 (call to syscall execve)"));
  CHECK_THAT(out.gdb, ContainsRegex(R"(process \d+ is executing new program: .*simple)"));
  CHECK_THAT(out.gdb, Contains("Catchpoint 1 (returned from syscall execve)"));
  CHECK_THAT(out.gdb, ContainsRegex(R"(\[Inferior 1 \(process \d+\) exited with code 07\])"));
}

TEST_CASE("catch syscall while a history collector records: caught, the history kept",
          "[e2e][catch-syscall][btrace]") {
  const std::string backend = GENERATE("soft", "step", "dbt", "inproc");
  INFO("collector: " << backend);
  SKIP_IF_NOT_BUILT(backend);
  auto out = e2e::run_gdb({.program = "simple",
                           .commands = {"break main", "continue", "record btrace", "catch syscall write",
                                        "continue", "bt", "continue", "monitor btrace",
                                        "record function-call-history 1,5", "record stop", "delete", "continue"},
                           .timeout = std::chrono::milliseconds(60000),
                           .server_flags = {"--btrace=" + backend}});
  INFO(out.transcript());
  CHECK_THAT(out.gdb, Contains("Catchpoint 2 (call to syscall write)"));
  CHECK_THAT(out.gdb, Contains("Catchpoint 2 (returned from syscall write)"));
  CHECK_THAT(out.gdb, ContainsRegex(R"(\n\d+\s+sum_squares\n)"));
  CHECK_THAT(out.gdb, ContainsRegex(R"(\n#\d+ +0x[0-9a-f]+ in main \(\))"));  // caught in the program's own code
  if (backend == "inproc") {
    // Recorded in the cache up to the call, not stepped (GDB's int3 at main: stepped over).
    CHECK_THAT(out.gdb, ContainsRegex(R"(inproc, [^\n]*, 0 gaps; 0 performed, [0-9] stepped\n)"));
  }
  CHECK_THAT(out.gdb, ContainsRegex(R"(\[Inferior 1 \(process \d+\) exited with code 07\])"));
}

TEST_CASE("catch syscall under inproc: the signal a caught call raised comes after its return, and the handler's "
          "rt_sigreturn is caught in the program's code",
          "[e2e][catch-syscall][btrace][signals]") {
  // The thread runs on in the recorder's cache between the stops; at each it stands in libc.
  auto out = e2e::run_gdb({.program = "corpus/tracer_corpus",
                           .commands = {"break diff_begin", "continue", "record btrace",
                                        "catch syscall tgkill rt_sigreturn", "continue", "continue", "continue",
                                        "continue", "bt 1", "info record", "delete", "continue"},
                           .args = {"signal"},
                           .server_flags = {"--btrace=inproc"}});
  INFO(out.transcript());
  CHECK_THAT(out.gdb, Contains("Catchpoint 2 (call to syscall tgkill)"));
  CHECK_THAT(out.gdb, Contains("Catchpoint 2 (returned from syscall tgkill)"));
  CHECK_THAT(out.gdb, Contains("Program received signal SIGUSR1"));
  CHECK_THAT(out.gdb, Contains("Catchpoint 2 (call to syscall rt_sigreturn), <signal handler called>"));
  CHECK_THAT(out.gdb, ContainsRegex(R"(Recorded \d+ instructions in \d+ functions \(0 gaps\) for thread 1 )"));
  CHECK_THAT(out.gdb, Contains("exited normally"));
}
