// The server's surface beyond running programs: thread-local variables (qGetTLSAddr through
// libthread_db) and `monitor` commands, with gdbserver's words.
#include <catch2/catch.hpp>

#include "test/e2e/collectors.hpp"
#include "test/e2e/gdb_session.hpp"
#include "test/e2e/matchers.hpp"
#include "test/support/skip.hpp"

using Catch::Matchers::Contains;

namespace {

// Every thread's copy of each variable: main sets base 0, the two workers 100 and 200.
const std::vector<std::string> kPrintEveryThread = {
    "break all_set", "continue", "thread apply all print tls_main", "thread apply all print (int) errno"};

void check_per_thread(const e2e::SessionResult& out, int offset) {
  for (int base : {0, 100, 200}) {
    CHECK_THAT(out.gdb, Contains(" = " + std::to_string(base + offset)));
  }
}

}  // namespace

TEST_CASE("thread-local variables and errno: each thread's own copy, in the program and a library",
          "[e2e][tls]") {
  auto commands = kPrintEveryThread;
  commands.push_back("thread apply all print tls_lib");
  auto out = e2e::run_gdb({.program = "tls", .commands = commands});
  INFO(out.transcript());
  CHECK_THAT(out.gdb, Contains("Breakpoint 1, all_set"));
  CHECK_THAT(out.gdb, !Contains("Cannot find thread-local storage"));
  check_per_thread(out, 1);  // tls_main
  check_per_thread(out, 2);  // tls_lib, in libtls_lib.so
  check_per_thread(out, 3);  // errno, in libc
}

TEST_CASE("thread-local variables in a static program", "[e2e][tls]") {
  auto out = e2e::run_gdb({.program = "tls_static", .commands = kPrintEveryThread});
  INFO(out.transcript());
  CHECK_THAT(out.gdb, Contains("Breakpoint 1, all_set"));
  CHECK_THAT(out.gdb, !Contains("Cannot find thread-local storage"));
  check_per_thread(out, 1);
  check_per_thread(out, 3);
}

TEST_CASE("thread-local variables under the dbt recorder: Valgrind's gdbserver finds them",
          "[e2e][tls][btrace]") {
  SKIP_IF_NOT_BUILT(std::string("dbt"));
  if (e2e::gdb_major_version() >= 17) {
    HS_SKIP("GDB 17 and later look thread-local storage up themselves, through fs_base, which Valgrind's "
            "gdbserver does not describe (they send no qGetTLSAddr)");
  }
  for (const char* program : {"tls", "tls_static"}) {
    INFO("program " << program);
    auto out = e2e::run_gdb({.program = program,
                             .commands = kPrintEveryThread,
                             .timeout = std::chrono::milliseconds(60000),
                             .server_flags = {"--btrace=dbt"}});
    INFO(out.transcript());
    CHECK_THAT(out.gdb, Contains("hit Breakpoint 1, all_set"));
    CHECK_THAT(out.gdb, !Contains("Cannot find thread-local storage"));
    check_per_thread(out, 1);  // tls_main
    check_per_thread(out, 3);  // errno, in libc
  }
}

TEST_CASE("no libthread_db along the search path: GDB is told, the server serves on", "[e2e][tls]") {
  auto out = e2e::run_gdb({.program = "tls",
                           .commands = {"monitor set libthread-db-search-path /nonexistent",
                                        "break all_set", "continue", "print tls_main",
                                        "monitor set libthread-db-search-path", "print tls_main"}});
  INFO(out.transcript());
  CHECK_THAT(out.gdb, Contains("libthread-db-search-path set to `/nonexistent'"));
  if (e2e::gdb_major_version() < 17) {
    CHECK_THAT(out.gdb, Contains("Cannot find thread-local storage for Thread"));
    CHECK_THAT(out.gdb, Contains("Remote target failed to process qGetTLSAddr request"));
    CHECK_THAT(out.gdb, Contains("$1 = 1"));  // the default path again: found
  } else {
    // GDB 17 and later find it themselves (fs_base and the loader's data) and never ask.
    CHECK_THAT(out.gdb, Contains("$1 = 1\n"));
    CHECK_THAT(out.gdb, Contains("$2 = 1\n"));
  }
  CHECK_THAT(out.gdb, Contains("libthread-db-search-path set to `$sdir:$pdir'"));
}

TEST_CASE("monitor: gdbserver's commands and messages; an unknown one is an error with the list",
          "[e2e][monitor]") {
  auto out = e2e::run_gdb({.program = "simple",
                           .commands = {"monitor help", "monitor set debug 1", "monitor set debug 0",
                                        "monitor set remote-debug 1", "monitor set remote-debug 0",
                                        "monitor set debug-hw-points 1", "monitor set debug-hw-points 0",
                                        "monitor set event-loop-debug 1", "monitor set event-loop-debug 0",
                                        "monitor set debug-format all", "monitor set debug-format none",
                                        "monitor set debug-format timestamp", "monitor set debug-format none",
                                        "monitor set debug-format bogus", "monitor", "monitor frobnicate",
                                        "print 6*7"}});
  INFO(out.transcript());
  CHECK_THAT(out.gdb, Contains("The following monitor commands are supported:"));
  CHECK_THAT(out.gdb, Contains("Quit GDBserver"));
  for (const char* said : {"Debug output enabled.", "Debug output disabled.", "Protocol debug output enabled.",
                           "Protocol debug output disabled.", "H/W point debugging output enabled.",
                           "H/W point debugging output disabled.", "Event loop debug output enabled.",
                           "Event loop debug output disabled.", "All extra debug format options enabled.",
                           "All extra debug format options disabled.",
                           "Timestamps will be added to debug output.",
                           "Unknown debug-format argument: \"bogus\"", "Unknown monitor command."}) {
    CHECK_THAT(out.gdb, Contains(said));
  }
  CHECK_THAT(out.gdb, Contains("Protocol error with Rcmd"));
  CHECK_THAT(out.gdb, Contains("$1 = 42"));  // still serving
}

TEST_CASE("info os: the tables gdbserver lists, the inferior among the processes", "[e2e][osdata]") {
  auto out = e2e::run_gdb({.program = "simple",
                           .commands = {"info os", "info os processes", "info os threads", "info os unknown_entry"}});
  INFO(out.transcript());
  CHECK_THAT(out.gdb, Contains("processes  Listing of all processes"));
  CHECK_THAT(out.gdb, Contains("sockets    Listing of all internet-domain sockets"));
  const auto at = out.server_err.find("created; pid = ");
  REQUIRE(at != std::string::npos);
  const std::string pid = out.server_err.substr(at + 15, out.server_err.find('\n', at) - at - 15);
  CHECK_THAT(out.gdb, e2e::ContainsRegex("\\n" + pid + " +\\S+ +" + e2e::prog_path("simple") + " +[0-9,]+"));
  CHECK_THAT(out.gdb, e2e::ContainsRegex("\\n" + pid + " +simple +" + pid + " +[0-9]+"));  // its thread
  CHECK_THAT(out.gdb, Contains("Empty data returned by target.  Wrong osdata type?"));
}

TEST_CASE("permissions: GDB's QAllow reaches the server at connection; reading goes on",
          "[e2e][session]") {
  // GDB changes these only while no program runs, says them at connection (QAllow), and
  // keeps to them itself; the server refuses the same (unit tests: QAllow).
  auto out = e2e::run_gdb({.program = "simple",
                           .commands = {"break square", "continue", "print global_counter", "monitor exit"},
                           .remote_debug = true,
                           .init_commands = {"set may-write-memory off", "set may-insert-breakpoints off",
                                             "set may-interrupt off"}});
  INFO(out.transcript());
  CHECK_THAT(out.server_err,
             Contains("<- $QAllow:WriteReg:1;WriteMem:0;InsertBreak:0;InsertTrace:1;InsertFastTrace:1;Stop:0"));
  CHECK_THAT(out.gdb, Contains("May not insert breakpoints"));
  CHECK_THAT(out.gdb, Contains("$1 = 0\n"));
}
