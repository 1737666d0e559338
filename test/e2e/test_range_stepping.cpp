// Range stepping (vCont;r) with real GDB: `next` over a line with a call, a line that loops
// inside itself, a line that branches out of its range, and a line that SIGALRM interrupts
// again and again; each `next` ends on the following line and the program's work is right.
#include <catch2/catch.hpp>

#include <string>

#include "test/e2e/gdb_session.hpp"
#include "test/e2e/matchers.hpp"

using Catch::Matchers::Contains;
using e2e::ContainsRegex;

TEST_CASE("range stepping: next over a call, a loop, a branch and a signalled line; one line each",
          "[e2e][range-stepping]") {
  std::vector<std::string> commands = {"break main", "continue", "handle SIGALRM nostop noprint pass"};
  commands.insert(commands.end(), 9, "next");
  commands.push_back("continue");
  auto out = e2e::run_gdb(
      {.program = "ranges", .commands = commands, .remote_debug = true, .server_flags = {"--debug=ptrace"}});
  INFO(out.transcript().substr(0, 20000));
  // Each `next` stopped on the line after the one it started on, in source order.
  CHECK_THAT(out.gdb, ContainsRegex(R"(\n\d+\s+total \+= twice\(3\); /\* range: a call \*/\n)"
                                    R"(\d+\s+for \(long i = 0;[^\n]*\n)"
                                    R"(\d+\s+if \(total > 1000\)[^\n]*\n)"
                                    R"(\d+\s+struct itimerval every_ms[^\n]*\n)"
                                    R"(\d+\s+setitimer\(ITIMER_REAL, &every_ms, NULL\);\n)"
                                    R"(\d+\s+while \(ticks < 5\) counted\+\+;[^\n]*\n)"
                                    R"(\d+\s+struct itimerval off[^\n]*\n)"));
  CHECK_THAT(out.gdb, !Contains("twice (v=3)"));  // the call was stepped over, not into
  CHECK_THAT(out.gdb, Contains("exited normally"));
  CHECK_THAT(out.server_out, Contains("total=8 ticks>=5:1 skipped=0"));
  // The server stepped the ranges itself: GDB sent vCont;r, and the signals that interrupted
  // the busy line came back to GDB as stops inside a range step.
  CHECK(e2e::occurrences(out.server_err, "vCont;r") >= 6);
  bool signal_answered_range = false;
  const std::string& log = out.server_err;
  for (auto at = log.find("<- $vCont;r"); at != std::string::npos; at = log.find("<- $vCont;r", at + 1)) {
    const auto reply = log.find("-> $", at);
    if (reply != std::string::npos && log.compare(reply + 4, 3, "T0e") == 0) {
      signal_answered_range = true;
    }
  }
  CHECK(signal_answered_range);
  // Straight-line code ran at full speed to an int3 at the end of each piece (the program has
  // one thread), and the branches inside the loops were performed by the server.
  CHECK(e2e::occurrences(out.server_err, "of its range to an int3") >= 4);
  CHECK_THAT(out.server_err, Contains("performed the branch at"));
}

TEST_CASE("range steps of one thread while another's signals come and go: no stray trap",
          "[e2e][range-stepping][threads]") {
  // GDB `next`s the second thread through run() while the main thread, running the same lines,
  // has its SIGUSR1s reported (print): a range step may begin while the main thread's event
  // waits, and the main thread then runs the line the stepped one ran to an int3 of ours. That
  // int3 must be gone before it does (it was once seen as a SIGTRAP, then SIGSEGV).
  std::vector<std::string> commands = {"handle SIGUSR1 nostop print pass", "break run if who == 1",
                                       "continue", "delete"};
  commands.insert(commands.end(), 30, "next");
  commands.push_back("continue");
  auto out = e2e::run_gdb({.program = "resignal", .commands = commands, .timeout = std::chrono::seconds(90)});
  INFO(out.transcript().substr(0, 20000));
  CHECK_THAT(out.gdb, Contains("received signal SIGUSR1"));
  CHECK(e2e::occurrences(out.gdb, "run: body") >= 5);
  CHECK_THAT(out.gdb, !Contains("SIGTRAP"));
  CHECK_THAT(out.gdb, !Contains("SIGSEGV"));
  CHECK_THAT(out.gdb, Contains("exited normally"));
  CHECK_THAT(out.server_out, Contains("resignal ok"));
}
