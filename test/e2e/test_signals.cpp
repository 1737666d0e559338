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

TEST_CASE("QPassSignals: a passed signal is delivered without a stop, a nopass one is held back",
          "[e2e][signals][threads]") {
  // mt signals: a worker tgkills itself with SIGUSR1 three times, then SIGUSR2 once.
  auto out = e2e::run_gdb({.program = "mt",
                           .commands = {"handle SIGUSR1 nostop noprint pass",
                                        "handle SIGUSR2 stop print nopass", "continue",
                                        "print $_siginfo.si_signo", "info threads", "continue"},
                           .args = {"signals"},
                           .remote_debug = true});
  INFO(out.transcript());
  CHECK_THAT(out.server_err, ContainsRegex(R"(<- \$QPassSignals:[0-9a-f;]*\b1e;)"));
  CHECK_THAT(out.server_err, !Contains("-> $T1e"));  // SIGUSR1 never reported
  // SIGUSR2 stops the thread that sent it to itself (not the main thread).
  CHECK_THAT(out.gdb, ContainsRegex(R"(Thread 2 "mt" received signal SIGUSR2)"));
  CHECK_THAT(out.gdb, ContainsRegex(R"(\$1 = 12\n)"));
  CHECK_THAT(out.gdb, ContainsRegex(R"(\* 2 +Thread \d+\.\d+ "mt")"));
  CHECK_THAT(out.server_out, Contains("usr1=3 usr2=0"));
  CHECK_THAT(out.gdb, Contains("exited normally"));
}

TEST_CASE("a SIGUSR2 held back by GDB and then delivered with `signal`", "[e2e][signals]") {
  auto out = e2e::run_gdb({.program = "mt",
                           .commands = {"handle SIGUSR1 nostop noprint pass", "continue",
                                        "signal SIGUSR2"},
                           .args = {"signals"}});
  INFO(out.transcript());
  CHECK_THAT(out.gdb, Contains("received signal SIGUSR2"));
  CHECK_THAT(out.server_out, Contains("usr1=3 usr2=1"));
}

TEST_CASE("siginfo of a SIGSEGV in a secondary thread", "[e2e][signals][threads]") {
  auto out = e2e::run_gdb({.program = "mt",
                           .commands = {"continue", "print $_siginfo.si_signo",
                                        "print $_siginfo._sifields._sigfault.si_addr", "bt 1",
                                        "info threads", "continue"},
                           .args = {"segv"}});
  INFO(out.transcript());
  CHECK_THAT(out.gdb, ContainsRegex(R"(Thread 2 "crasher" received signal SIGSEGV, Segmentation fault.)"));
  CHECK_THAT(out.gdb, ContainsRegex(R"(\$1 = 11\n)"));
  CHECK_THAT(out.gdb, ContainsRegex(R"(\$2 = \(void \*\) 0x28\n)"));
  CHECK_THAT(out.gdb, ContainsRegex(R"(#0  (0x[0-9a-f]+ in )?crasher \(arg=0x28\))"));
  CHECK_THAT(out.gdb, ContainsRegex(R"(\* 2 +Thread \d+\.\d+ "crasher")"));
  CHECK_THAT(out.gdb, Contains("Program terminated with signal SIGSEGV"));
}

TEST_CASE("SIGSTOP and SIGCONT sent from outside are reported, then the program goes on",
          "[e2e][signals][threads]") {
  // mt stopcont: a child process sends SIGSTOP, then SIGCONT, to the 3-thread program.
  auto out = e2e::run_gdb({.program = "mt",
                           .commands = {"handle SIGSTOP stop print nopass", "continue", "continue",
                                        "continue"},
                           .args = {"stopcont"}});
  INFO(out.transcript());
  CHECK_THAT(out.gdb, ContainsRegex(R"(received signal SIGSTOP, Stopped \(signal\).)"));
  CHECK_THAT(out.gdb, ContainsRegex(R"(received signal SIGCONT, Continued.)"));
  CHECK_THAT(out.gdb, Contains("exited normally"));
  CHECK_THAT(out.server_out, Contains("stopcont done counters=1"));
}

TEST_CASE("a signal arriving during `next` stops the step; stepping on delivers it once", "[e2e][signals]") {
  auto out = e2e::run_gdb({.program = "sigstep",
                           .commands = {"handle SIGUSR1 stop print pass", "break main", "continue", "next",
                                        "next", "print handled", "next", "print handled", "continue"}});
  INFO(out.transcript());
  // The first `next` (over signal()) is quiet; the second runs poke(), which raises SIGUSR1.
  CHECK_THAT(out.gdb, Contains("Program received signal SIGUSR1"));
  CHECK_THAT(out.gdb, ContainsRegex(R"(\$1 = 0\n)"));  // stopped before the handler ran
  // Stepping on with the signal enters the handler (as with gdbserver: GDB steps into it).
  CHECK_THAT(out.gdb, ContainsRegex(R"(on_usr1 \(sig=\d+\) at .*sigstep\.c:8)"));
  CHECK_THAT(out.gdb, ContainsRegex(R"(\$2 = 0\n)"));
  CHECK_THAT(out.gdb, Contains("exited with code 01"));  // delivered exactly once
}
