// pwntools (Debian's python3-pwntools), a script that runs `gdbserver` from PATH: with the server
// under test named so, its gdb.debug() talks to the program through the server's stdio and waits
// for the server to exit when the program and GDB are done (gdbserver's rule after a disconnect:
// test_server_lifetime.cpp). The script is test/e2e/pwntools_script.py.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "test/e2e/gdb_session.hpp"
#include "test/e2e/process.hpp"
#include "test/support/skip.hpp"

using Catch::Matchers::Contains;
using namespace std::chrono_literals;

namespace {

bool have_pwntools() {
  e2e::Child probe({.argv = {"/usr/bin/python3", "-c", "import pwn"}, .merge_stderr = true});
  return e2e::exit_code(probe.wait(e2e::Clock::now() + 60s)) == 0;
}

// A directory holding `gdbserver`, a symlink to the server under test; removed with this.
struct GdbserverOnPath {
  std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("hs-pwntools-" + std::to_string(::getpid()));
  GdbserverOnPath() {
    std::filesystem::create_directories(dir);
    std::filesystem::remove(dir / "gdbserver");
    std::filesystem::create_symlink(e2e::server_path(), dir / "gdbserver");
  }
  ~GdbserverOnPath() { std::filesystem::remove_all(dir); }
};

// pwntools_script.py MODE PROG with the server first on PATH; its output and stderr together.
struct ScriptRun {
  std::optional<int> status;  // nullopt: it did not finish in time (a hang)
  std::string out;
};

ScriptRun run_script(const std::string& mode, const std::string& prog) {
  e2e::require_server_exists();
  e2e::become_subreaper();
  auto before = e2e::current_children();
  ScriptRun run;
  {
    GdbserverOnPath path;
    const char* inherited = std::getenv("PATH");
    e2e::Child script({.argv = {"/usr/bin/env", "PATH=" + path.dir.string() + ":" + (inherited ? inherited : "/usr/bin:/bin"),
                                "PWNLIB_NOTERM=1", "/usr/bin/python3", HS_SOURCE_DIR "/test/e2e/pwntools_script.py", mode,
                                e2e::prog_path(prog)},
                       .merge_stderr = true});
    run.status = script.wait(e2e::Clock::now() + 90s);
    run.out = script.out();
    script.kill_and_reap();
  }
  e2e::kill_stray_children(before);
  return run;
}

// The seconds after "WAITED: ".
double waited(const std::string& out) {
  const auto at = out.find("WAITED: ");
  return at == std::string::npos ? 1e9 : std::atof(out.c_str() + at + 8);
}

}  // namespace

TEST_CASE("pwntools gdb.debug, the server as `gdbserver`: the program's I/O through it, io.poll(block=True) "
          "returns once the program and GDB are done",
          "[e2e][pwntools]") {
  if (!have_pwntools()) {
    HS_SKIP("python3-pwntools is not installed (scripts/setup.sh installs it)");
  }
  auto run = run_script("debug", "triage_cases");
  INFO(run.out);
  REQUIRE(run.status.has_value());  // else io.poll hung: the server outlived GDB
  CHECK(e2e::exit_code(run.status) == 0);
  CHECK_THAT(run.out, Contains("ECHO: hello from pwntools"));
  CHECK_THAT(run.out, Contains("POLL: 0"));
  CHECK_THAT(run.out, Contains("to stderr"));  // the program's stderr, through the server's
  CHECK_THAT(run.out, Contains("Child exited with status 3"));
  CHECK(waited(run.out) < 30);
}

TEST_CASE("pwntools' `gdbserver --multi --once --attach localhost:0 PID` (gdb.attach on Android): "
          "extended-remote, detach, the server exits and the program runs on",
          "[e2e][pwntools][attach]") {
  if (!have_pwntools()) {
    HS_SKIP("python3-pwntools is not installed (scripts/setup.sh installs it)");
  }
  auto run = run_script("attach", "sleeper");
  INFO(run.out);
  REQUIRE(run.status.has_value());
  CHECK(e2e::exit_code(run.status) == 0);
  CHECK_THAT(run.out, Contains("ARGV: gdbserver --multi --no-disable-randomization --once --attach localhost:0 PID"));
  CHECK_THAT(run.out, Contains("PID SAID: True"));  // pwntools read "Attached; pid = N"
  CHECK_THAT(run.out, Contains("detached]"));
  CHECK_THAT(run.out, Contains("POLL: 0"));
  CHECK(waited(run.out) < 30);
  CHECK_THAT(run.out, Contains("TRACER: 0"));
  CHECK_THAT(run.out, Contains("TARGET RUNS: True"));
}
