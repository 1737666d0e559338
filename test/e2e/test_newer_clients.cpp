// What newer GDBs ask of a server that GDB 13 does not: qExecAndArgs and single-inf-arg
// (GDB 18), the binary memory read `x` (binary-upload+) and vFile:lstat (GDB 17). Each case needs
// a GDB that speaks it ($HINDSIGHT_GDB from a client lane: test/clients/run.sh) and is skipped,
// saying so, with an older one.
#include <catch2/catch.hpp>

#include "test/e2e/gdb_session.hpp"
#include "test/e2e/matchers.hpp"
#include "test/support/skip.hpp"

using Catch::Matchers::Contains;
using e2e::ContainsRegex;

namespace {

#define REQUIRE_GDB_AT_LEAST(major, what)                                                         \
  do {                                                                                           \
    if (e2e::gdb_major_version() < (major)) {                                                    \
      HS_SKIP("GDB " + std::to_string(e2e::gdb_major_version()) + " does not " what " (GDB " #major \
              " does; run in a client lane: test/clients/run.sh sid)");                          \
    }                                                                                            \
  } while (0)

}  // namespace

TEST_CASE("GDB 18 asks qExecAndArgs: `show args` and the remote exec-file are the server's command line's",
          "[e2e][session][newer]") {
  REQUIRE_GDB_AT_LEAST(18, "send qExecAndArgs");
  auto out = e2e::run_gdb({.program = "envinfo",
                           .commands = {"show args", "show remote exec-file", "continue"},
                           .args = {"a b", "$HOME", ""},
                           .remote_debug = true});
  INFO(out.transcript());
  CHECK_THAT(out.server_err, Contains("<- $qExecAndArgs"));
  CHECK_THAT(out.gdb, Contains(R"(Argument list to give program being debugged when it is started is "a\ b \$HOME ''".)"));
  CHECK_THAT(out.gdb, Contains("The remote exec-file is \"" + e2e::prog_path("envinfo") + "\"."));
  CHECK_THAT(out.server_out, Contains(" ARG[a b] ARG[$HOME] ARG[]\n"));
}

TEST_CASE("GDB 18 with single-inf-arg: `run` in extended mode hands the argument line to the shell, which expands it",
          "[e2e][session][extended][newer]") {
  REQUIRE_GDB_AT_LEAST(18, "send single-inf-arg");
  e2e::Child server({.argv = {e2e::server_path(), "--once", "--multi", ":0"}});
  REQUIRE(server.wait_for_text("Listening on port ", e2e::Clock::now() + std::chrono::seconds(5)));
  const std::string port = server.err().substr(server.err().find("Listening on port ") + 18, 5);
  e2e::Child gdb({.argv = e2e::gdb_batch_argv({"-ex", "target extended-remote 127.0.0.1:" + std::to_string(std::stoi(port)),
                                               "-ex", "set remote exec-file " + e2e::prog_path("envinfo"), "-ex",
                                               "set args 'one two' $HOME $(echo sub)", "-ex", "run", "-ex", "set startup-with-shell off",
                                               "-ex", "run", "-ex", "monitor exit"}),
                  .merge_stderr = true});
  REQUIRE(gdb.wait(e2e::Clock::now() + std::chrono::seconds(60)));
  server.wait(e2e::Clock::now() + std::chrono::seconds(5));
  INFO("gdb:\n" << gdb.out() << "\nserver:\n" << server.err() << server.out());
  const char* home = std::getenv("HOME");
  REQUIRE(home != nullptr);
  // Through the shell: $HOME expanded, the quotes group. Without it: GDB's splitting, no expansion.
  // (The shell's command substitution forks: a child that is not ours, left alone.)
  CHECK_THAT(server.out(), Contains(std::string(" ARG[one two] ARG[") + home + "] ARG[sub]\n"));
  CHECK_THAT(server.out(), Contains(" ARG[one two] ARG[$HOME] ARG[$(echo] ARG[sub)]\n"));
}

TEST_CASE("GDB 17 and later read memory with x (binary-upload+) and look for debug files with vFile:lstat",
          "[e2e][session][newer]") {
  REQUIRE_GDB_AT_LEAST(17, "use x or vFile:lstat");
  auto out = e2e::run_gdb({.program = "simple",
                           .commands = {"break square", "continue", "x/4xb &global_counter", "print global_counter",
                                        "set var global_counter = 0x7d23247e", "x/4xb &global_counter", "bt"},
                           .remote_debug = true});
  INFO(out.transcript());
  CHECK_THAT(out.server_err, ContainsRegex(R"(<- \$x[0-9a-f]+,[0-9a-f]+\n)"));
  CHECK_THAT(out.server_err, ContainsRegex(R"(<- \$vFile:lstat:[0-9a-f]+\n)"));
  CHECK_THAT(out.gdb, ContainsRegex(R"(<global_counter>:\t0x00\t0x00\t0x00\t0x00\n)"));
  CHECK_THAT(out.gdb, Contains("$1 = 0\n"));
  // Bytes the wire escapes (} # $ *) read back right.
  CHECK_THAT(out.gdb, ContainsRegex(R"(<global_counter>:\t0x7e\t0x24\t0x23\t0x7d\n)"));
  CHECK_THAT(out.gdb, ContainsRegex(R"(#1  0x[0-9a-f]+ in sum_squares \(n=4\) at)"));
}
