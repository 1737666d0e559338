// What the server says at its own terminal, word for word as GNU gdbserver (docs/usage.md
// promises the same lines; scripts and test harnesses wait for them). Each case passes against
// gdbserver 13 too (HINDSIGHT_SERVER=/usr/bin/gdbserver) but the --attach one: gdbserver stays
// waiting there ("client connection closed") where it would say "Detaching process(es)" on exit.
#include <catch2/catch.hpp>

#include <csignal>
#include <thread>

#include "test/e2e/gdb_session.hpp"
#include "test/e2e/process.hpp"

using Catch::Matchers::Contains;
using namespace std::chrono_literals;

namespace {

// The pid in "Process PROG created; pid = N" or "Attached; pid = N".
pid_t program_pid(const std::string& err) {
  const auto at = err.find("pid = ");
  return at == std::string::npos ? 0 : std::stoi(err.substr(at + 6));
}

// A GDB that connects, lets the program run, and is then killed (SIGKILL) mid-session: it
// says nothing to the server.
void gdb_killed_while_running(e2e::Child& server, int port, const std::string& target_command) {
  e2e::Child gdb({.argv = e2e::gdb_batch_argv({"-ex",
                           target_command + " 127.0.0.1:" + std::to_string(port), "-ex", "continue &", "-ex",
                           "echo running\\n", "-ex", "shell sleep 60"}),
                  .merge_stderr = true});
  REQUIRE(gdb.wait_for_text("running\n", e2e::Clock::now() + 20s, /*in_stdout=*/true));
  INFO(gdb.out());
  std::this_thread::sleep_for(300ms);  // the resume reached the server
  gdb.kill_and_reap();
  (void)server;
}

}  // namespace

TEST_CASE("a program killed by a signal: \"Child terminated with signal = 0x6 (SIGABRT)\"",
          "[e2e][words]") {
  auto out = e2e::run_gdb({.program = "triage_cases", .commands = {"continue", "continue"}, .args = {"abort"}});
  INFO(out.transcript());
  CHECK_THAT(out.gdb, Contains("received signal SIGABRT"));
  CHECK_THAT(out.server_err, Contains("\nChild terminated with signal = 0x6 (SIGABRT)\n"));
}

TEST_CASE("GDB killed mid-session, --once: \"Killing process(es): PID\", the program with it",
          "[e2e][words]") {
  e2e::require_server_exists();
  e2e::become_subreaper();
  auto before = e2e::current_children();
  {
    e2e::Child server({.argv = {e2e::server_path(), "--once", ":0", e2e::prog_path("sleeper"), "60"}});
    const int port = e2e::listening_port(server);
    const pid_t pid = program_pid(server.err());
    REQUIRE(pid > 0);
    gdb_killed_while_running(server, port, "target remote");
    const auto status = server.wait(e2e::Clock::now() + 10s);
    INFO(server.err());
    REQUIRE(status.has_value());  // gone with its one connection
    CHECK_THAT(server.err(), Contains("\nKilling process(es): " + std::to_string(pid) + "\n"));
    const char state = e2e::proc_state(pid);
    CHECK((state == '?' || state == 'Z'));  // killed (a zombie until its reaper, the test, reaps it)
  }
  e2e::kill_stray_children(before);
}

TEST_CASE("GDB killed mid-session, --once --attach: \"Detaching process(es): PID\", it runs on",
          "[e2e][words]") {
  e2e::require_server_exists();
  e2e::become_subreaper();
  auto before = e2e::current_children();
  {
    e2e::Child sleeper({.argv = {e2e::prog_path("sleeper"), "60"}});
    REQUIRE(sleeper.wait_for_text("pid", e2e::Clock::now() + 5s, /*in_stdout=*/true));
    e2e::Child server({.argv = {e2e::server_path(), "--once", "--attach", ":0", std::to_string(sleeper.pid())}});
    const int port = e2e::listening_port(server);
    gdb_killed_while_running(server, port, "target remote");
    const auto status = server.wait(e2e::Clock::now() + 10s);
    INFO(server.err());
    REQUIRE(status.has_value());
    CHECK_THAT(server.err(), Contains("\nDetaching process(es): " + std::to_string(sleeper.pid()) + "\n"));
    std::this_thread::sleep_for(100ms);
    CHECK(e2e::tracer_of(sleeper.pid()) == 0);
    const char state = e2e::proc_state(sleeper.pid());
    CHECK((state == 'S' || state == 'R'));  // still running
    sleeper.kill_and_reap();
  }
  e2e::kill_stray_children(before);
}

TEST_CASE("GDB killed mid-session, --multi: the server says so, listens again and serves the next GDB",
          "[e2e][words]") {
  e2e::require_server_exists();
  e2e::become_subreaper();
  auto before = e2e::current_children();
  {
    e2e::Child server({.argv = {e2e::server_path(), "--multi", ":0", e2e::prog_path("sleeper"), "60"}});
    const int port = e2e::listening_port(server);
    gdb_killed_while_running(server, port, "target extended-remote");
    const int again = e2e::listening_port(server, 2);
    INFO(server.err());
    CHECK(again == port);
    CHECK_THAT(server.err(), Contains("Remote side has terminated connection.  GDBserver will reopen the "
                                      "connection.\nListening on port " + std::to_string(port) + "\n"));
    CHECK_FALSE(server.exited());
    // The next GDB finds the program and ends the server.
    e2e::Child gdb({.argv = e2e::gdb_batch_argv({"-ex",
                             "target extended-remote 127.0.0.1:" + std::to_string(port), "-ex", "info threads",
                             "-ex", "monitor exit"}),
                    .merge_stderr = true});
    REQUIRE(gdb.wait(e2e::Clock::now() + 20s).has_value());
    INFO(gdb.out());
    CHECK_THAT(gdb.out(), Contains("Thread "));
    CHECK(server.wait(e2e::Clock::now() + 10s).has_value());
  }
  e2e::kill_stray_children(before);
}
