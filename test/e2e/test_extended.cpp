// Extended-remote (--multi): GDB runs, kills and runs again, attaches, and ends the server.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <thread>

#include "test/e2e/gdb_session.hpp"
#include "test/e2e/i386_kernel.hpp"
#include "test/e2e/matchers.hpp"
#include "test/e2e/process.hpp"
#include "test/support/skip.hpp"

using Catch::Matchers::Contains;

namespace {

// A --multi server (with more flags before COMM) and one GDB session of `commands` after
// `target extended-remote`; the session ends with `monitor exit`.
struct MultiSession {
  std::string gdb;
  std::string server_out;  // the programs' output
  std::string server_err;
  std::optional<int> server_status;
};

MultiSession run_multi(const std::vector<std::string>& server_flags, const std::vector<std::string>& commands) {
  e2e::require_server_exists();
  e2e::become_subreaper();
  auto before = e2e::current_children();
  MultiSession out;
  {
    std::vector<std::string> argv = {e2e::server_path()};
    argv.insert(argv.end(), server_flags.begin(), server_flags.end());
    argv.insert(argv.end(), {"--multi", ":0"});
    e2e::Child server({.argv = argv});
    std::vector<std::string> gdb_argv = e2e::gdb_batch_argv({"-ex", "target extended-remote 127.0.0.1:" + std::to_string(e2e::listening_port(server))});
    for (const auto& c : commands) {
      gdb_argv.insert(gdb_argv.end(), {"-ex", c});
    }
    gdb_argv.insert(gdb_argv.end(), {"-ex", "monitor exit"});
    e2e::Child gdb({.argv = gdb_argv, .merge_stderr = true});
    gdb.wait(e2e::Clock::now() + std::chrono::seconds(30));
    out.server_status = server.wait(e2e::Clock::now() + std::chrono::seconds(5));
    gdb.kill_and_reap();
    server.kill_and_reap();
    out.gdb = gdb.out();
    out.server_out = server.out();
    out.server_err = server.err();
  }
  e2e::kill_stray_children(before);
  return out;
}

// The MAIN[...] addresses envinfo printed, in order.
std::vector<std::string> main_addresses(const std::string& text) {
  std::vector<std::string> out;
  for (auto at = text.find("MAIN["); at != std::string::npos; at = text.find("MAIN[", at + 1)) {
    out.push_back(text.substr(at + 5, text.find(']', at) - at - 5));
  }
  return out;
}

}  // namespace

TEST_CASE("--multi: the environment, working directory and randomization GDB sets reach the program",
          "[e2e][extended]") {
  auto out = run_multi({}, {"set remote exec-file " + e2e::prog_path("envinfo"), "set environment FOO=bar",
                            "unset environment HOME", "set cwd /tmp", "run", "set cwd ~", "run", "set cwd",
                            "unset environment", "run", "set disable-randomization off", "run", "run"});
  INFO("gdb:\n" << out.gdb << "\nserver out:\n" << out.server_out << "\nserver err:\n" << out.server_err);
  CHECK_THAT(out.server_out, Contains("CWD[/tmp] FOO[bar] HOME[-]"));
  const char* home = std::getenv("HOME");
  REQUIRE(home != nullptr);
  CHECK_THAT(out.server_out, Contains("CWD[" + std::string(home) + "] FOO[bar] HOME[-]"));  // ~ expanded
  char here[4096];
  REQUIRE(::getcwd(here, sizeof here) != nullptr);
  CHECK_THAT(out.server_out, Contains("CWD[" + std::string(here) + "] FOO[-] HOME[" + home + "]"));  // reset
  auto mains = main_addresses(out.server_out);
  REQUIRE(mains.size() == 5);
  CHECK(mains[0] == mains[1]);  // randomization off (the default): main where it always is
  CHECK(mains[0] == mains[2]);
  CHECK(mains[3] != mains[4]);  // on: it moves (same place twice: 1 in 2^28)
  CHECK(out.server_status.has_value());
}

TEST_CASE("--multi: a working directory that does not exist fails `run` clearly; the server serves on",
          "[e2e][extended]") {
  auto out = run_multi({}, {"set remote exec-file " + e2e::prog_path("envinfo"), "set cwd /nonexistent-hindsight",
                            "run", "set cwd", "run"});
  INFO("gdb:\n" << out.gdb << "\nserver out:\n" << out.server_out << "\nserver err:\n" << out.server_err);
  CHECK_THAT(out.gdb, Contains("on the remote target failed"));
  CHECK_THAT(out.server_err, Contains("Couldn't chdir to /nonexistent-hindsight: No such file or directory."));
  CHECK_THAT(out.server_out, Contains("CWD["));  // the second run
  CHECK(out.server_status.has_value());
}

TEST_CASE("--multi: `run` of an i386 program where the kernel refuses it: GDB's run fails, the server says "
          "why in plain words and serves on", "[e2e][extended][i386]") {
  if (const std::string why = e2e::i386_not_refused(); !why.empty()) {
    HS_SKIP(why);
  }
  auto out = run_multi({}, {"set remote exec-file " + e2e::prog_path("simple_m32"), "run",
                            "set startup-with-shell off", "run",
                            "set remote exec-file " + e2e::prog_path("simple"), "run"});
  INFO("gdb:\n" << out.gdb << "\nserver out:\n" << out.server_out << "\nserver err:\n" << out.server_err);
  // GDB's own words for a failed vRun (it shows no text of the server's there).
  CHECK(e2e::occurrences(out.gdb, "on the remote target failed") == 2);
  CHECK_THAT(out.server_err, Contains("During startup program exited with code 126.\n" + std::string(e2e::kIa32Word)));
  CHECK_THAT(out.server_err, Contains("Cannot exec " + e2e::prog_path("simple_m32") + ": Exec format error.\n"));
  CHECK(e2e::occurrences(out.server_err, e2e::kIa32Word) == 2);
  CHECK_THAT(out.gdb, Contains("exited with code 07"));  // the 64-bit one runs
  CHECK(out.server_status.has_value());
}

TEST_CASE("--multi: R restarts the last program (GDB without vRun)", "[e2e][extended]") {
  auto out = run_multi({}, {"set remote exec-file " + e2e::prog_path("simple"), "file " + e2e::prog_path("simple"),
                            "break main", "run", "set remote run-packet off", "set remote exec-file", "run",
                            "info inferiors"});
  INFO("gdb:\n" << out.gdb << "\nserver err:\n" << out.server_err);
  std::size_t stops = 0;
  for (auto at = out.gdb.find("Breakpoint 1, main"); at != std::string::npos;
       at = out.gdb.find("Breakpoint 1, main", at + 1)) {
    ++stops;
  }
  CHECK(stops == 2);
  std::size_t created = 0;
  for (auto at = out.server_err.find("created; pid"); at != std::string::npos;
       at = out.server_err.find("created; pid", at + 1)) {
    ++created;
  }
  CHECK(created == 2);
}

TEST_CASE("--wrapper: programs start under the wrapper, stopped at their own first instruction",
          "[e2e][extended]") {
  SECTION("through the shell") {
    auto out = run_multi({"--wrapper", "env", "FOO=wrapped", "--"},
                         {"set remote exec-file " + e2e::prog_path("envinfo"), "file " + e2e::prog_path("envinfo"),
                          "break main", "run", "info inferiors", "continue"});
    INFO("gdb:\n" << out.gdb << "\nserver out:\n" << out.server_out << "\nserver err:\n" << out.server_err);
    CHECK_THAT(out.gdb, Contains("Breakpoint 1, main"));
    CHECK_THAT(out.server_out, Contains("FOO[wrapped]"));
  }
  SECTION("without a shell") {
    auto out = run_multi({"--no-startup-with-shell", "--wrapper", "env", "FOO=direct", "--"},
                         {"set remote exec-file " + e2e::prog_path("envinfo"), "file " + e2e::prog_path("envinfo"),
                          "break main", "run", "continue"});
    INFO("gdb:\n" << out.gdb << "\nserver out:\n" << out.server_out << "\nserver err:\n" << out.server_err);
    CHECK_THAT(out.gdb, Contains("Breakpoint 1, main"));
    CHECK_THAT(out.server_out, Contains("FOO[direct]"));
  }
}

TEST_CASE("--multi: run, kill, run again, monitor exit", "[e2e][extended]") {
  e2e::require_server_exists();
  e2e::become_subreaper();
  auto before = e2e::current_children();
  {
    e2e::Child server({.argv = {e2e::server_path(), "--multi", ":0"}});
    const std::string port_text = std::to_string(e2e::listening_port(server));
    e2e::Child gdb({.argv = e2e::gdb_batch_argv({"-ex", "target extended-remote 127.0.0.1:" + port_text,
                             "-ex", "set remote exec-file " + e2e::prog_path("simple"),
                             "-ex", "run",
                             "-ex", "break square", "-ex", "run", "-ex", "bt 1",
                             "-ex", "kill", "-ex", "info inferiors",
                             "-ex", "run", "-ex", "print x", "-ex", "kill",
                             "-ex", "monitor exit"}),
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
    const std::string port_text = std::to_string(e2e::listening_port(server));
    const std::string list_fds =
        "python import os; d = '/proc/%d/fd' % gdb.selected_inferior().pid; "
        "print('FDS', sorted(os.readlink(d + '/' + f) for f in os.listdir(d)))";
    e2e::Child gdb({.argv = e2e::gdb_batch_argv({"-ex", "target extended-remote 127.0.0.1:" + port_text,
                             "-ex", "set remote exec-file " + e2e::prog_path("simple"),
                             "-ex", "file " + e2e::prog_path("simple"), "-ex", "break main", "-ex", "run",
                             "-ex", list_fds, "-ex", "kill", "-ex", "monitor exit"}),
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

TEST_CASE("--multi: attach to a missing or already traced process, run a missing or non-executable "
          "file: each a clear error, the server serves on",
          "[e2e][extended]") {
  // A process another tracer (a GDB of its own) holds: ptrace refuses a second one.
  e2e::Child held({.argv = {e2e::prog_path("sleeper"), "30"}});
  REQUIRE(held.wait_for_text("pid=", e2e::Clock::now() + std::chrono::seconds(5), true));
  const std::string held_pid = std::to_string(held.pid());
  e2e::Child holder({.argv = {"/usr/bin/gdb", "-nx", "-batch", "-ex", "attach " + held_pid, "-ex", "shell sleep 20"},
                     .merge_stderr = true});
  for (int i = 0; i < 100 && e2e::tracer_of(held.pid()) == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  const pid_t holder_gdb = e2e::tracer_of(held.pid());
  REQUIRE(holder_gdb != 0);
  const std::string not_executable = std::string(HS_SOURCE_DIR) + "/README.md";
  auto out = run_multi({}, {"file " + e2e::prog_path("simple"), "attach 999999", "attach " + held_pid,
                            "set remote exec-file /nonexistent/hindsight-prog", "run",
                            "set remote exec-file " + not_executable, "run",
                            "set remote exec-file " + e2e::prog_path("simple"), "run"});
  holder.kill_and_reap();
  INFO("gdb:\n" << out.gdb << "\nserver err:\n" << out.server_err);
  CHECK_THAT(out.gdb, Contains("Attaching to process 999999 failed"));
  CHECK_THAT(out.server_err, Contains("Cannot attach to process 999999: No such process (3)"));
  CHECK_THAT(out.gdb, Contains("Attaching to process " + held_pid + " failed"));
  CHECK_THAT(out.server_err, Contains("Cannot attach to process " + held_pid + ": Operation not permitted (1), process " +
                                      held_pid + " is already traced by process " + std::to_string(holder_gdb)));
  CHECK_THAT(out.server_err, Contains("/nonexistent/hindsight-prog"));
  CHECK_THAT(out.server_err, Contains(not_executable));
  CHECK_THAT(out.gdb, Contains("exited with code 07"));  // the last run, after every error
  CHECK(out.server_status.has_value());                  // and monitor exit still ended it
}

TEST_CASE("--multi: attach while a signal is on its way: reported as the attach's stop, given back at "
          "detach",
          "[e2e][extended][attach][signals]") {
  // signal_loop always has a SIGALRM pending; losing one (a detach that drops the signal GDB
  // was told of) ends it with status 3. It runs until told (SIGUSR1), however slow the rounds.
  e2e::Child looper({.argv = {e2e::prog_path("signal_loop"), "600"}});
  REQUIRE(looper.wait_for_text("pid=", e2e::Clock::now() + std::chrono::seconds(5), true));
  const std::string pid = std::to_string(looper.pid());
  // Most attaches find the signal blocked in its handler (a plain stop); about one in six
  // meets it on its way: 30 rounds make missing that a one-in-200 event.
  constexpr int kRounds = 30;
  std::vector<std::string> commands = {"handle SIGALRM stop print pass"};
  for (int i = 0; i < kRounds; ++i) {
    commands.insert(commands.end(), {"attach " + pid, "detach"});
  }
  auto out = run_multi({}, commands);
  INFO("gdb:\n" << out.gdb << "\nserver err:\n" << out.server_err);
  CHECK_THAT(out.gdb, Contains("Program received signal SIGALRM"));
  std::size_t detached = 0;
  for (auto at = out.gdb.find(") detached]"); at != std::string::npos; at = out.gdb.find(") detached]", at + 1)) {
    ++detached;
  }
  CHECK(detached == kRounds);
  ::kill(looper.pid(), SIGUSR1);
  const auto status = looper.wait(e2e::Clock::now() + std::chrono::seconds(20));
  INFO("signal_loop: " << e2e::describe_status(status) << "\n" << looper.out());
  CHECK(e2e::exit_code(status) == 0);
  CHECK_THAT(looper.out(), Contains("signals ok"));
}
