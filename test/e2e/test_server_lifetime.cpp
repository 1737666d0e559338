// Whether the server ends when GDB leaves, by gdbserver's rule (gdbserver/server.cc, its main
// loop after a disconnect): it exits with --once, or when GDB never sent '!' (`target remote`,
// with --multi too) and nothing is left to debug; otherwise it listens again. Scripts wait for
// that exit: pwntools runs `gdbserver --multi` and connects with `target remote` (test_pwntools).
// Each case passes against gdbserver 13 too (HINDSIGHT_SERVER=/usr/bin/gdbserver).
#include <catch2/catch.hpp>

#include "test/e2e/gdb_session.hpp"
#include "test/e2e/process.hpp"

using Catch::Matchers::Contains;
using namespace std::chrono_literals;

namespace {

struct AfterGdb {
  std::optional<int> server_status;  // nullopt: still running 10 s after GDB ended
  bool listens_again = false;        // said "Listening on port" a second time
  std::string gdb, server_err;
};

// SERVER `server_args` (COMM :0 among them), then one batch GDB: `target` 127.0.0.1:PORT and
// `commands`; then whether the server ends by itself or listens for the next GDB.
AfterGdb after_gdb_leaves(const std::vector<std::string>& server_args, const std::string& target,
                          const std::vector<std::string>& commands) {
  e2e::require_server_exists();
  e2e::become_subreaper();
  auto before = e2e::current_children();
  AfterGdb out;
  {
    std::vector<std::string> argv = {e2e::server_path()};
    argv.insert(argv.end(), server_args.begin(), server_args.end());
    e2e::Child server({.argv = argv});
    const int port = e2e::listening_port(server);
    std::vector<std::string> gdb_args = {"-ex", target + " 127.0.0.1:" + std::to_string(port)};
    for (const auto& c : commands) {
      gdb_args.insert(gdb_args.end(), {"-ex", c});
    }
    e2e::Child gdb({.argv = e2e::gdb_batch_argv(gdb_args), .merge_stderr = true});
    REQUIRE(gdb.wait(e2e::Clock::now() + 30s).has_value());
    out.gdb = gdb.out();
    const auto deadline = e2e::Clock::now() + 10s;
    auto said_twice = [&] {
      const auto first = server.err().find("Listening on port ");
      return server.err().find("Listening on port ", first + 1) != std::string::npos;
    };
    server.pump_until(deadline, [&] { return server.exited() || said_twice(); });
    out.listens_again = said_twice();
    out.server_status = out.listens_again ? std::nullopt : server.wait(deadline);
    out.server_err = server.err();
    server.kill_and_reap();
  }
  e2e::kill_stray_children(before);
  return out;
}

void require_exited(const AfterGdb& r) {
  INFO("gdb:\n" << r.gdb << "\nserver:\n" << r.server_err);
  REQUIRE(r.server_status.has_value());
  CHECK(e2e::exit_code(r.server_status) == 0);
  CHECK_THAT(r.server_err, !Contains("Remote side has terminated connection"));
}

void require_listens_again(const AfterGdb& r) {
  INFO("gdb:\n" << r.gdb << "\nserver:\n" << r.server_err);
  CHECK_FALSE(r.server_status.has_value());
  CHECK(r.listens_again);
  CHECK_THAT(r.server_err, Contains("Remote side has terminated connection.  GDBserver will reopen the connection."));
}

}  // namespace

TEST_CASE("target remote, nothing left when GDB leaves: the server exits, --multi or not (gdbserver's rule)",
          "[e2e][lifetime]") {
  const std::string simple = e2e::prog_path("simple");
  SECTION("--multi, the program exited (pwntools' gdb.debug)") {
    auto r = after_gdb_leaves({"--multi", ":0", simple}, "target remote", {"continue"});
    CHECK_THAT(r.gdb, Contains("exited with code 07"));
    require_exited(r);
  }
  SECTION("--multi, the program killed by a signal") {
    auto r = after_gdb_leaves({"--multi", ":0", e2e::prog_path("crash")}, "target remote", {"continue", "continue"});
    CHECK_THAT(r.gdb, Contains("terminated with signal SIGSEGV"));
    require_exited(r);
  }
  SECTION("--multi, GDB killed it") {
    auto r = after_gdb_leaves({"--multi", ":0", e2e::prog_path("sleeper"), "60"}, "target remote", {"kill"});
    require_exited(r);
  }
  SECTION("--multi, GDB detached and it ran to its end") {
    auto r = after_gdb_leaves({"--multi", ":0", simple}, "target remote", {"detach"});
    CHECK_THAT(r.gdb, Contains(") detached]"));
    require_exited(r);
  }
  SECTION("without --multi, the program exited") {
    require_exited(after_gdb_leaves({":0", simple}, "target remote", {"continue"}));
  }
}

TEST_CASE("target extended-remote: the server listens again when GDB leaves, --multi or not (the '!' decides)",
          "[e2e][lifetime]") {
  const std::string simple = e2e::prog_path("simple");
  SECTION("--multi") {
    require_listens_again(after_gdb_leaves({"--multi", ":0", simple}, "target extended-remote", {"continue"}));
  }
  SECTION("without --multi") {
    require_listens_again(after_gdb_leaves({":0", simple}, "target extended-remote", {"continue"}));
  }
}

TEST_CASE("target remote, a program left when GDB leaves: the server listens again, --multi or not",
          "[e2e][lifetime]") {
  const std::string sleeper = e2e::prog_path("sleeper");
  SECTION("--multi") {
    require_listens_again(after_gdb_leaves({"--multi", ":0", sleeper, "60"}, "target remote", {"disconnect"}));
  }
  SECTION("without --multi") {
    require_listens_again(after_gdb_leaves({":0", sleeper, "60"}, "target remote", {"disconnect"}));
  }
}

TEST_CASE("--once: the server exits after the first GDB, extended mode too", "[e2e][lifetime]") {
  auto r = after_gdb_leaves({"--once", "--multi", ":0", e2e::prog_path("simple")}, "target extended-remote",
                            {"continue"});
  CHECK_THAT(r.gdb, Contains("exited with code 07"));
  require_exited(r);
}
