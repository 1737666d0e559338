// Extended-remote (--multi): GDB runs, kills and runs again, attaches, and ends the server.
#include <catch2/catch.hpp>

#include <thread>

#include "test/e2e/gdb_session.hpp"
#include "test/e2e/process.hpp"

using Catch::Matchers::Contains;

namespace {

// The port a server started with ":0" says it listens on.
std::string listening_port(e2e::Child& server) {
  REQUIRE(server.wait_for_text("Listening on port", e2e::Clock::now() + std::chrono::seconds(5)));
  std::string port_text = server.err().substr(server.err().find("Listening on port ") + 18);
  return port_text.substr(0, port_text.find('\n'));
}

}  // namespace

TEST_CASE("--multi: run, kill, run again, monitor exit", "[e2e][extended]") {
  e2e::require_server_exists();
  e2e::become_subreaper();
  auto before = e2e::current_children();
  {
    e2e::Child server({.argv = {e2e::server_path(), "--multi", ":0"}});
    const std::string port_text = listening_port(server);
    e2e::Child gdb({.argv = {"/usr/bin/gdb", "-nx", "-batch", "-iex", "set debuginfod enabled off",
                             "-ex", "target extended-remote 127.0.0.1:" + port_text,
                             "-ex", "set remote exec-file " + e2e::prog_path("simple"),
                             "-ex", "run",
                             "-ex", "break square", "-ex", "run", "-ex", "bt 1",
                             "-ex", "kill", "-ex", "info inferiors",
                             "-ex", "run", "-ex", "print x", "-ex", "kill",
                             "-ex", "monitor exit"},
                    .merge_stderr = true});
    gdb.wait(e2e::Clock::now() + std::chrono::seconds(30));
    auto status = server.wait(e2e::Clock::now() + std::chrono::seconds(5));
    INFO("gdb:\n" << gdb.out() << "\nserver:\n" << server.err());
    CHECK_THAT(gdb.out(), Contains("exited with code 07"));       // the first run, to the end
    CHECK_THAT(gdb.out(), Contains("Breakpoint 1, square (x=1)"));  // the second run
    CHECK_THAT(gdb.out(), Contains("$1 = 1"));                      // the third run
    CHECK(status.has_value());                                      // monitor exit ended it
    CHECK(e2e::exit_code(status) == 0);
    gdb.kill_and_reap();
    server.kill_and_reap();
  }
  e2e::kill_stray_children(before);
}

TEST_CASE("--multi: a program started by `run` inherits none of the server's descriptors",
          "[e2e][extended]") {
  e2e::require_server_exists();
  e2e::become_subreaper();
  auto before = e2e::current_children();
  {
    e2e::Child server({.argv = {e2e::server_path(), "--multi", ":0"}});
    const std::string port_text = listening_port(server);
    const std::string list_fds =
        "python import os; d = '/proc/%d/fd' % gdb.selected_inferior().pid; "
        "print('FDS', sorted(os.readlink(d + '/' + f) for f in os.listdir(d)))";
    e2e::Child gdb({.argv = {"/usr/bin/gdb", "-nx", "-batch", "-iex", "set debuginfod enabled off",
                             "-ex", "target extended-remote 127.0.0.1:" + port_text,
                             "-ex", "set remote exec-file " + e2e::prog_path("simple"),
                             "-ex", "file " + e2e::prog_path("simple"), "-ex", "break main", "-ex", "run",
                             "-ex", list_fds, "-ex", "kill", "-ex", "monitor exit"},
                    .merge_stderr = true});
    gdb.wait(e2e::Clock::now() + std::chrono::seconds(30));
    INFO("gdb:\n" << gdb.out() << "\nserver:\n" << server.err());
    REQUIRE_THAT(gdb.out(), Contains("FDS ["));
    // The listening socket, GDB's connection and the SIGCHLD signalfd stay with the server.
    CHECK_THAT(gdb.out(), !Contains("socket:"));
    CHECK_THAT(gdb.out(), !Contains("signalfd"));
    gdb.kill_and_reap();
    server.kill_and_reap();
  }
  e2e::kill_stray_children(before);
}
