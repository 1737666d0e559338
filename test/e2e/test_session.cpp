// GDB sessions on test/progs/simple.c over TCP and stdio, with no local file: GDB reads the
// executable and its libraries through the protocol (qXfer:exec-file, vFile:*).
//
// Register writes: GNU gdbserver 13 prints "Warning: ptrace(regsets_store_inferior_registers):
// Bad address" on this CPU for every register write, yet the writes do land (checked below by
// reading back after flushing GDB's cache and by the program's own result), so these tests
// pass against it too.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstdio>
#include <fstream>

#include "test/e2e/gdb_session.hpp"
#include "test/e2e/matchers.hpp"

using Catch::Matchers::Contains;
using e2e::ContainsRegex;

TEST_CASE("break, continue, bt, finish without a local file", "[e2e][session][installed]") {
  auto out = e2e::run_gdb(
      {.program = "simple", .commands = {"break square", "continue", "bt", "finish", "continue"}});
  INFO(out.transcript());
  CHECK_THAT(out.gdb, Contains("Reading symbols from target:"));
  CHECK_THAT(out.gdb, ContainsRegex(R"(Breakpoint 1 at 0x[0-9a-f]+: file .*simple\.c, line \d+)"));
  CHECK_THAT(out.gdb, Contains("Breakpoint 1, square (x=1) at"));
  CHECK_THAT(out.gdb, Contains("#0  square (x=1) at"));
  CHECK_THAT(out.gdb, ContainsRegex(R"(#1  0x[0-9a-f]+ in sum_squares \(n=4\) at)"));
  CHECK_THAT(out.gdb, ContainsRegex(R"(#2  0x[0-9a-f]+ in main \(\) at)"));
  // `finish` (its "Run till exit" line is not printed in batch mode) lands in the caller.
  CHECK_THAT(out.gdb,
             ContainsRegex(R"(\n0x[0-9a-f]+ in sum_squares \(n=4\) at .*simple\.c:\d+\n)"));
  CHECK_THAT(out.gdb, ContainsRegex(R"(Value returned is \$\d+ = 1\n)"));
  // The breakpoint is still there on the next call.
  CHECK_THAT(out.gdb, Contains("Breakpoint 1, square (x=2) at"));
  // GDB killed the live inferior on exit: the server reaped it and exited (--once).
  CHECK(out.server_status.has_value());
  CHECK(out.stray_processes == 0);
}

TEST_CASE("next, step, print locals and globals, info registers", "[e2e][session]") {
  auto out =
      e2e::run_gdb({.program = "simple",
                    .commands = {"break main", "continue", "next", "step", "next", "print total",
                                 "print n", "print global_counter", "info registers rip"}});
  INFO(out.transcript());
  CHECK_THAT(out.gdb, Contains("Breakpoint 1, main () at"));
  CHECK_THAT(out.gdb, Contains("int sum = sum_squares(limit);"));   // shown by `next`
  CHECK_THAT(out.gdb, Contains("sum_squares (n=4) at"));            // entered by `step`
  CHECK_THAT(out.gdb, Contains("for (int i = 1; i <= n; i++) {"));  // the `next` after it
  CHECK_THAT(out.gdb, ContainsRegex(R"(\$1 = 0\n\$2 = 4\n\$3 = 0\n)"));
  CHECK_THAT(out.gdb, ContainsRegex(R"(rip +0x[0-9a-f]+ +0x[0-9a-f]+ <sum_squares\+\d+>)"));
}

TEST_CASE("conditional breakpoint sees the loop state", "[e2e][session]") {
  auto out = e2e::run_gdb({.program = "simple",
                           .commands = {"break square if x == 3", "continue", "print x",
                                        "print global_counter", "up", "print total"}});
  INFO(out.transcript());
  CHECK_THAT(out.gdb, Contains("square (x=3) at"));
  // Two iterations done: counter 2, total 1 + 4.
  CHECK_THAT(out.gdb, ContainsRegex(R"(\$1 = 3\n\$2 = 2\n[\s\S]*\$3 = 5\n)"));
}

TEST_CASE("set var on a local changes what the program computes", "[e2e][session]") {
  auto out =
      e2e::run_gdb({.program = "simple",
                    .commands = {"break sum_squares", "continue", "next", "set var total = 1000",
                                 "print total", "finish", "continue"}});
  INFO(out.transcript());
  CHECK_THAT(out.gdb, ContainsRegex(R"(\$1 = 1000\n)"));
  CHECK_THAT(out.gdb, ContainsRegex(R"(Value returned is \$2 = 1030\n)"));
  CHECK_THAT(out.server_out, Contains("sum=1030 counter=4"));
  CHECK_THAT(out.gdb, ContainsRegex(R"(\[Inferior 1 \(process \d+\) exited with code 01\])"));
}

TEST_CASE("continue to the end reports the exit code", "[e2e][session]") {
  auto out = e2e::run_gdb({.program = "simple", .commands = {"continue"}});
  INFO(out.transcript());
  CHECK_THAT(out.gdb, ContainsRegex(R"(\[Inferior 1 \(process \d+\) exited with code 07\])"));
  CHECK_THAT(out.server_out, Contains("sum=30 counter=4"));
  CHECK_THAT(out.server_err, Contains("Child exited with status 7"));
  CHECK(out.server_status.has_value());  // --once: the server ends with the session
  CHECK(out.stray_processes == 0);
}

TEST_CASE("inferior call: print square(3)", "[e2e][session]") {
  auto out = e2e::run_gdb({.program = "simple",
                           .commands = {"break sum_squares", "continue", "print square(3)",
                                        "print square(12) + 1", "delete", "continue"}});
  INFO(out.transcript());
  CHECK_THAT(out.gdb, ContainsRegex(R"(\$1 = 9\n\$2 = 145\n)"));
  // The calls left the program's own state alone.
  CHECK_THAT(out.gdb, ContainsRegex(R"(exited with code 07\])"));
}

TEST_CASE("set var $rax reaches the inferior", "[e2e][session]") {
  // After `finish` from square(1) the caller adds %eax to total: 100 instead of 1 gives 129.
  auto out = e2e::run_gdb(
      {.program = "simple",
       .commands = {"break square", "continue", "finish", "set var $rax = 100",
                    "maint flush register-cache", "print $rax", "delete", "continue"}});
  INFO(out.transcript());
  CHECK_THAT(out.gdb, ContainsRegex(R"(Value returned is \$1 = 1\n)"));
  CHECK_THAT(out.gdb, ContainsRegex(R"(\$2 = 100\n)"));  // read back from the server
  CHECK_THAT(out.server_out, Contains("sum=129 counter=4"));
  CHECK_THAT(out.gdb, ContainsRegex(R"(exited with code 01\])"));
}

TEST_CASE("SSE and x87 register writes read back from the server", "[e2e][session]") {
  auto out = e2e::run_gdb(
      {.program = "simple",
       .commands = {"break square", "continue", "set var $xmm1.v4_int32[2] = 0x5eed",
                    "set var $st0 = 2.5", "set var $rbx = 0x7777", "maint flush register-cache",
                    "print/x $xmm1.v4_int32[2]", "print $st0", "print/x $rbx"}});
  INFO(out.transcript());
  CHECK_THAT(out.gdb, ContainsRegex(R"(\$1 = 0x5eed\n\$2 = 2\.5\n\$3 = 0x7777\n)"));
}

TEST_CASE("a session over stdio (target remote | SERVER - PROG)", "[e2e][session][stdio]") {
  auto out =
      e2e::run_gdb({.program = "simple",
                    .commands = {"break square", "continue", "bt", "finish", "delete", "continue"},
                    .transport = e2e::Transport::stdio});
  INFO(out.transcript());
  CHECK_THAT(out.gdb, Contains("Reading symbols from target:"));
  CHECK_THAT(out.gdb, Contains("Breakpoint 1, square (x=1) at"));
  CHECK_THAT(out.gdb, ContainsRegex(R"(#1  0x[0-9a-f]+ in sum_squares \(n=4\) at)"));
  CHECK_THAT(out.gdb, ContainsRegex(R"(Value returned is \$1 = 1\n)"));
  CHECK_THAT(out.gdb, ContainsRegex(R"(\[Inferior 1 \(process \d+\) exited with code 07\])"));
  // The program's stdout goes to stderr, never into the protocol stream on stdout.
  CHECK_THAT(out.gdb, Contains("sum=30 counter=4"));
}

TEST_CASE("--remote-debug logs the packets on stderr", "[e2e][session]") {
  auto out = e2e::run_gdb(
      {.program = "simple", .commands = {"break square", "continue"}, .remote_debug = true});
  INFO(out.transcript());
  CHECK_THAT(out.gdb, Contains("Breakpoint 1, square (x=1) at"));
  CHECK_THAT(out.server_err, Contains("qSupported"));
  CHECK_THAT(out.server_err, Contains("vCont"));
}

TEST_CASE("a forked child runs free, with none of our breakpoints left in it", "[e2e][session][fork]") {
  auto out = e2e::run_gdb({.program = "forker", .commands = {"break work", "continue", "print x", "continue"}});
  INFO(out.transcript());
  // GDB follows the parent: the first stop is the parent's own call, after the child is done.
  CHECK_THAT(out.gdb, ContainsRegex(R"(Breakpoint 1, work \(x=1\))"));
  CHECK_THAT(out.server_out, Contains("child exited 0"));
  CHECK_THAT(out.gdb, Contains("exited normally"));
}

TEST_CASE("exec: GDB learns of the new program and stops in it", "[e2e][session][exec]") {
  auto out = e2e::run_gdb({.program = "execer",
                           .commands = {"set breakpoint pending on", "break square", "continue", "bt 1",
                                        "delete", "continue"},
                           .args = {e2e::prog_path("simple")}});
  INFO(out.transcript());
  CHECK_THAT(out.gdb, ContainsRegex(R"(process \d+ is executing new program: .*simple)"));
  CHECK_THAT(out.gdb, Contains("Breakpoint 1, square (x=1)"));  // a symbol of the new program
  CHECK_THAT(out.gdb, Contains("exited with code 07"));
}

TEST_CASE("libraries: info sharedlibrary lists the loader and libc, read over the protocol; a breakpoint in libc hits",
          "[e2e][session][libraries]") {
  auto out = e2e::run_gdb({.program = "simple",
                           .commands = {"break main", "continue", "info sharedlibrary", "break fflush", "continue",
                                        "bt 2", "info symbol $pc"}});
  INFO(out.transcript());
  CHECK_THAT(out.gdb, ContainsRegex(R"(\n0x[0-9a-f]+ +0x[0-9a-f]+ +Yes[^\n]* +target:/lib64/ld-linux-x86-64\.so\.2\n)"));
  CHECK_THAT(out.gdb, ContainsRegex(R"(\n0x[0-9a-f]+ +0x[0-9a-f]+ +Yes[^\n]* +target:/lib/x86_64-linux-gnu/libc\.so\.6\n)"));
  CHECK_THAT(out.gdb, ContainsRegex(R"(Breakpoint 2, [^\n]*fflush)"));
  CHECK_THAT(out.gdb, ContainsRegex(R"(#1  0x[0-9a-f]+ in main \(\) at)"));
  CHECK_THAT(out.gdb, ContainsRegex(R"(fflush[^\n]* in section \.text of target:/lib/x86_64-linux-gnu/libc\.so\.6\n)"));
}

TEST_CASE("libraries: a dlopen'd library is listed, broken in, and gone once unloaded", "[e2e][session][libraries]") {
  auto out = e2e::run_gdb({.program = "triage_cases",
                           .commands = {"set breakpoint pending on", "break dlclose", "continue", "info sharedlibrary",
                                        "continue", "info sharedlibrary"},
                           .args = {"dlopen"}});
  INFO(out.transcript());
  CHECK_THAT(out.gdb, ContainsRegex(R"(Breakpoint 1, [^\n]*dlclose)"));
  CHECK_THAT(out.gdb, ContainsRegex(R"(\n0x[0-9a-f]+ +0x[0-9a-f]+ +Yes[^\n]* +target:/lib/x86_64-linux-gnu/libm\.so\.6\n)"));
  CHECK_THAT(out.gdb, Contains("Program received signal SIGSEGV"));
  const auto last_list = out.gdb.rfind("Shared Object Library");
  REQUIRE(last_list != std::string::npos);
  CHECK(out.gdb.find("libm.so.6", last_list) == std::string::npos);  // unloaded
  CHECK_THAT(out.server_out, Contains("cos(0) = 1"));
}

TEST_CASE("libraries: an incremental read (augmented-libraries-svr4-read) gives what follows the entry GDB names",
          "[e2e][session][libraries]") {
  // GDB asks so at the loader's probes when it can; here GDB's own `maint packet` asks, with
  // the link-map addresses of the full list.
  const std::string script =
      "python\n"
      "import re\n"
      "full = gdb.execute('maint packet qXfer:libraries-svr4:read::0,1000', to_string=True)\n"
      "lms = re.findall(r' lm=\"(0x[0-9a-f]+)\"', full)\n"
      "main = re.search(r'main-lm=\"(0x[0-9a-f]+)\"', full).group(1)\n"
      "print('LMS', len(lms))\n"
      "after = gdb.execute('maint packet qXfer:libraries-svr4:read:start=%s;prev=%s:0,1000' % (lms[1][2:], lms[0][2:]), to_string=True)\n"
      "print('AFTER', len(re.findall(r'<library ', after)), 'main-lm' in after, lms[0] in after)\n"
      "stale = gdb.execute('maint packet qXfer:libraries-svr4:read:start=%s;prev=%s:0,1000' % (lms[1][2:], main[2:]), to_string=True)\n"
      "print('STALE', len(re.findall(r'<library ', stale)))\n"
      "end\n";
  const std::string file = "/tmp/hindsight-e2e-svr4-" + std::to_string(::getpid()) + ".gdb";
  {
    std::ofstream(file) << script;
  }
  auto out = e2e::run_gdb({.program = "tls", .commands = {"break all_set", "continue", "source " + file}});
  std::remove(file.c_str());
  INFO(out.transcript());
  // vdso, libtls_lib, libc, ld.so: after the first, the three others, no main-lm, not the first.
  CHECK_THAT(out.gdb, Contains("LMS 4\n"));
  CHECK_THAT(out.gdb, Contains("AFTER 3 False False\n"));
  CHECK_THAT(out.gdb, Contains("STALE 0\n"));  // prev is not what comes before start
}
