// Bad input at the process level: what the server says and how it exits.
#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <thread>

#include "test/e2e/gdb_session.hpp"
#include "test/e2e/i386_kernel.hpp"
#include "test/support/scoped_env.hpp"
#include "test/support/skip.hpp"

using Catch::Matchers::Contains;

namespace {

constexpr auto kExitTimeout = std::chrono::seconds(5);

// Runs the server with `args` until it exits by itself (killed after kExitTimeout).
struct Finished {
  std::optional<int> status;
  std::string out;
  std::string err;
};

Finished run_server(const std::vector<std::string>& args) {
  e2e::require_server_exists();
  e2e::become_subreaper();
  auto before = e2e::current_children();
  std::vector<std::string> argv = {e2e::server_path()};
  argv.insert(argv.end(), args.begin(), args.end());
  Finished f;
  {
    e2e::Child server({.argv = argv});
    f.status = server.wait(e2e::Clock::now() + kExitTimeout);
    server.kill_and_reap();
    f.out = server.out();
    f.err = server.err();
  }
  e2e::kill_stray_children(before);
  return f;
}

}  // namespace

TEST_CASE("a program that does not exist: non-zero exit, message names it", "[e2e][cli]") {
  const std::string missing = "/nonexistent/hindsight-e2e-no-such-prog";
  const std::string port = ":" + std::to_string(e2e::free_tcp_port());
  SECTION("started through the shell (default)") {
    auto f = run_server({"--once", port, missing});
    INFO("status: " << e2e::describe_status(f.status) << "\nstderr:\n" << f.err);
    REQUIRE(f.status.has_value());  // exited by itself, did not wait for a connection
    CHECK(e2e::exit_code(f.status) > 0);
    CHECK_THAT(f.err, Contains(missing));
    // gdbserver's words, which GDB's test harness waits for (the shell says what it missed).
    CHECK_THAT(f.err, Contains("During startup program exited with code 127.\nExiting\n"));
    CHECK_THAT(f.err, !Contains("Listening on port"));
  }
  SECTION("--no-startup-with-shell") {
    auto f = run_server({"--once", "--no-startup-with-shell", port, missing});
    INFO("status: " << e2e::describe_status(f.status) << "\nstderr:\n" << f.err);
    REQUIRE(f.status.has_value());
    CHECK(e2e::exit_code(f.status) > 0);
    CHECK_THAT(f.err, Contains("Cannot exec " + missing + ": No such file or directory."));
    CHECK_THAT(f.err, Contains("Exiting"));
    CHECK_THAT(f.err, !Contains("Listening on port"));
  }
  SECTION("stdio: the line saying so comes first") {
    auto f = run_server({"stdio", missing});
    INFO("status: " << e2e::describe_status(f.status) << "\nstderr:\n" << f.err);
    CHECK(e2e::exit_code(f.status) == 1);
    CHECK(f.err.starts_with("stdin/stdout redirected\n"));
  }
}

TEST_CASE("a file that is not executable: the reason, no program, exit 1", "[e2e][cli]") {
  const std::string not_executable = std::string(HS_SOURCE_DIR) + "/README.md";
  auto f = run_server({"--once", "--no-startup-with-shell", ":0", not_executable});
  INFO("status: " << e2e::describe_status(f.status) << "\nstderr:\n" << f.err);
  CHECK(e2e::exit_code(f.status) == 1);
  CHECK_THAT(f.err, Contains("Cannot exec " + not_executable + ": Permission denied."));
  auto shell = run_server({"--once", ":0", not_executable});
  INFO("through the shell:\n" << shell.err);
  CHECK(e2e::exit_code(shell.status) == 1);
  CHECK_THAT(shell.err, Contains("During startup program exited with code 126."));
}

TEST_CASE("--btrace=dbt and a program that cannot start: the reason and Exiting at once, no wait for Valgrind",
          "[e2e][cli][dbt]") {
  if (!HS_DBT_BUILT) {
    HS_SKIP("the dbt recorder is not built (valgrind's headers and core archives not found)");
  }
  const std::string missing = "/nonexistent/hindsight-e2e-no-such-prog";
  SECTION("a file that does not exist") {
    const auto start = e2e::Clock::now();
    auto f = run_server({"--once", "--btrace=dbt", ":0", missing});
    const auto took = e2e::Clock::now() - start;
    INFO("status: " << e2e::describe_status(f.status) << "\nstderr:\n" << f.err);
    REQUIRE(f.status.has_value());
    CHECK(e2e::exit_code(f.status) == 1);
    CHECK_THAT(f.err, Contains("Cannot exec " + missing + ": No such file or directory.\nExiting\n"));
    CHECK(took < std::chrono::seconds(3));
  }
  SECTION("a program Valgrind cannot start (an arm64 one): Valgrind's end ends the wait for it") {
    const std::string arm64 =
        std::filesystem::temp_directory_path() / ("hindsight-e2e-arm64-" + std::to_string(::getpid()));
    {
      // An ELF header and nothing more: 64-bit, little-endian, ET_EXEC, EM_AARCH64 (183).
      std::string header(64, '\0');
      header.replace(0, 7, "\x7f" "ELF\x02\x01\x01");
      header[16] = 2;
      header[18] = static_cast<char>(183);
      header[20] = 1;
      header[52] = 64;
      header[54] = 56;
      header[58] = 64;
      std::ofstream(arm64, std::ios::binary) << header;
    }
    std::filesystem::permissions(arm64, std::filesystem::perms::owner_all);
    auto f = run_server({"--once", "--btrace=dbt", "--no-startup-with-shell", ":0", arm64});
    std::filesystem::remove(arm64);
    INFO("status: " << e2e::describe_status(f.status) << "\nstderr:\n" << f.err);
    REQUIRE(f.status.has_value());  // within kExitTimeout: no 30 s wait for vgdb
    CHECK(e2e::exit_code(f.status) == 1);
    CHECK_THAT(f.err, Contains("failed to start tool"));  // Valgrind's words: it was tried
    CHECK_THAT(f.err, Contains("Cannot exec " + arm64 + ": Exec format error.\n"));  // then soft
    CHECK_THAT(f.err, Contains("Exiting\n"));
  }
}

TEST_CASE("a kernel that refuses i386 programs: the server says so in plain words, at once",
          "[e2e][cli][i386]") {
  if (const std::string why = e2e::i386_not_refused(); !why.empty()) {
    HS_SKIP(why);
  }
  const std::string prog = e2e::prog_path("simple_m32");
  SECTION("through the shell (default)") {
    auto f = run_server({"--once", ":0", prog});
    INFO("status: " << e2e::describe_status(f.status) << "\nstderr:\n" << f.err);
    REQUIRE(f.status.has_value());
    CHECK(e2e::exit_code(f.status) == 1);
    // The shell's complaint and gdbserver's words, then what it means.
    CHECK_THAT(f.err, Contains("During startup program exited with code 126.\n" + std::string(e2e::kIa32Word)));
    CHECK_THAT(f.err, Contains("CONFIG_IA32_EMULATION"));
    CHECK_THAT(f.err, Contains("Exiting\n"));
  }
  SECTION("--no-startup-with-shell") {
    auto f = run_server({"--once", "--no-startup-with-shell", ":0", prog});
    INFO("status: " << e2e::describe_status(f.status) << "\nstderr:\n" << f.err);
    REQUIRE(f.status.has_value());
    CHECK(e2e::exit_code(f.status) == 1);
    CHECK_THAT(f.err, Contains("Cannot exec " + prog + ": Exec format error.\n"));
    CHECK_THAT(f.err, Contains(e2e::kIa32Word));
  }
  SECTION("--btrace=dbt: said before Valgrind starts") {
    if (!HS_DBT_BUILT) {
      HS_SKIP("the dbt recorder is not built (valgrind's headers and core archives not found)");
    }
    const auto start = e2e::Clock::now();
    auto f = run_server({"--once", "--btrace=dbt", ":0", prog});
    const auto took = e2e::Clock::now() - start;
    INFO("status: " << e2e::describe_status(f.status) << "\nstderr:\n" << f.err);
    REQUIRE(f.status.has_value());
    CHECK(e2e::exit_code(f.status) == 1);
    CHECK_THAT(f.err, Contains("Cannot exec " + prog + ": Exec format error.\n" + e2e::kIa32Word));
    CHECK_THAT(f.err, !Contains("failed to start tool"));
    CHECK(took < std::chrono::seconds(3));
  }
}

TEST_CASE("a COMM host that does not resolve: gdbserver's words, before any program starts", "[e2e][cli]") {
  for (const char* comm : {"tcp8:123", "garbage:1234", "udp123:::2345"}) {
    auto f = run_server({"--once", comm, e2e::prog_path("simple")});
    INFO(comm << " status: " << e2e::describe_status(f.status) << "\nstderr:\n" << f.err);
    CHECK(e2e::exit_code(f.status) == 1);
    CHECK_THAT(f.err, Contains(std::string(comm) + ": cannot resolve name: "));
    CHECK_THAT(f.err, !Contains("created; pid"));
  }
}

TEST_CASE("a program named without a directory is found in the server's directory first", "[e2e][cli]") {
  e2e::require_server_exists();
  e2e::become_subreaper();
  auto before = e2e::current_children();
  {
    e2e::Child server({.argv = {e2e::server_path(), "--once", ":0", "simple"}, .cwd = HS_TEST_PROGS_DIR});
    REQUIRE(server.wait_for_text("Listening on port", e2e::Clock::now() + kExitTimeout));
    INFO(server.err());
    CHECK_THAT(server.err(), Contains("Process " + e2e::prog_path("simple") + " created; pid = "));
    server.kill_and_reap();
  }
  e2e::kill_stray_children(before);
}

TEST_CASE("--attach after COMM, where gdbserver still takes it", "[e2e][cli]") {
  e2e::require_server_exists();
  e2e::become_subreaper();
  auto before = e2e::current_children();
  {
    e2e::Child target({.argv = {e2e::prog_path("sleeper")}});
    e2e::Child server({.argv = {e2e::server_path(), "--once", ":0", "--attach", std::to_string(target.pid())}});
    REQUIRE(server.wait_for_text("Listening on port", e2e::Clock::now() + kExitTimeout));
    CHECK_THAT(server.err(), Contains("Attached; pid = " + std::to_string(target.pid())));
    server.kill_and_reap();
    target.kill_and_reap();
  }
  e2e::kill_stray_children(before);
}

TEST_CASE("--selftest: the server's self-checks, in gdbserver's words", "[e2e][cli]") {
  auto all = run_server({"--selftest"});
  INFO(all.out << all.err);
  CHECK(e2e::exit_code(all.status) == 0);
  CHECK_THAT(all.out, Contains("Running selftest ptrace."));
  CHECK_THAT(all.out, Contains("Running selftest libthread_db."));
  CHECK_THAT(all.out, Contains(" unit tests, 0 failed"));
  auto some = run_server({"--selftest=framing"});
  CHECK_THAT(some.out, Contains("Ran 2 unit tests, 0 failed"));
}

TEST_CASE("a port in use: gdbserver's exact words, non-zero exit", "[e2e][cli]") {
  // Hold a port with our own listening socket.
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  REQUIRE(fd >= 0);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof sa;
  REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) == 0);
  REQUIRE(::listen(fd, 1) == 0);
  REQUIRE(::getsockname(fd, reinterpret_cast<sockaddr*>(&sa), &len) == 0);
  const int port = ntohs(sa.sin_port);

  auto f = run_server({"--once", ":" + std::to_string(port), e2e::prog_path("simple")});
  ::close(fd);
  INFO("status: " << e2e::describe_status(f.status) << "\nstderr:\n" << f.err);
  REQUIRE(f.status.has_value());
  CHECK(e2e::exit_code(f.status) > 0);
  // The exact line GDB's test boards wait for, then gdbserver's last word.
  CHECK_THAT(f.err, Contains("Can't bind address: Address already in use.\nExiting\n"));
  // Bound before anything starts, as gdbserver: no program was started.
  CHECK_THAT(f.err, !Contains("created; pid"));
  CHECK_THAT(f.out, !Contains("sum="));
}

namespace {

// How a --once server ends after GDB is gone: by itself (a socket closes), or, on a serial line,
// which never hangs up, not until it is told to (SIGTERM), as gdbserver.
enum class ServerEnd { by_itself, on_sigterm };

// GDB connects to `target` (a socket or device path) of a --once server running `simple`:
// stops at square, runs to the end; then the server ends as `end` says.
void debug_simple_through(e2e::Child& server, const std::string& target, ServerEnd end) {
  e2e::Child gdb({.argv = e2e::gdb_batch_argv({"-ex", "target remote " + target, "-ex", "break square", "-ex",
                                               "continue", "-ex", "delete", "-ex", "continue"}),
                  .merge_stderr = true});
  gdb.wait(e2e::Clock::now() + std::chrono::seconds(30));
  if (end == ServerEnd::on_sigterm) {
    CHECK_FALSE(server.wait(e2e::Clock::now() + std::chrono::milliseconds(500)).has_value());
    ::kill(server.pid(), SIGTERM);
  }
  auto status = server.wait(e2e::Clock::now() + kExitTimeout);
  INFO("gdb:\n" << gdb.out() << "\nserver:\n" << server.err());
  CHECK_THAT(gdb.out(), Contains("Breakpoint 1, square (x=1)"));
  CHECK_THAT(gdb.out(), Contains("exited with code 07"));
  CHECK(status.has_value());
  gdb.kill_and_reap();
  server.kill_and_reap();
}

}  // namespace

TEST_CASE("a unix:PATH COMM: a socket of mode 0600, GDB connects, removed at exit", "[e2e][cli]") {
  e2e::require_server_exists();
  e2e::become_subreaper();
  auto before = e2e::current_children();
  const std::string path = "/tmp/hindsight-e2e-" + std::to_string(::getpid()) + ".sock";
  ::unlink(path.c_str());
  {
    e2e::Child server({.argv = {e2e::server_path(), "--once", "unix:" + path, e2e::prog_path("simple")}});
    REQUIRE(server.wait_for_text("Listening on " + path, e2e::Clock::now() + kExitTimeout));
    struct stat st {};
    REQUIRE(::stat(path.c_str(), &st) == 0);
    CHECK(S_ISSOCK(st.st_mode));
    CHECK((st.st_mode & 0777) == 0600);
    debug_simple_through(server, path, ServerEnd::by_itself);
  }
  e2e::kill_stray_children(before);
  struct stat st {};
  CHECK(::stat(path.c_str(), &st) != 0);  // removed
}

namespace {

// One end of a null-modem cable: a pseudo-terminal whose slave (its path) is raw.
struct PtyEnd {
  int master = -1;
  std::string path;
  PtyEnd() {
    master = ::posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (master < 0 || ::grantpt(master) != 0 || ::unlockpt(master) != 0) {
      return;
    }
    path = ::ptsname(master);
    const int slave = ::open(path.c_str(), O_RDWR | O_NOCTTY | O_CLOEXEC);
    termios mode{};
    if (slave >= 0 && ::tcgetattr(slave, &mode) == 0) {
      ::cfmakeraw(&mode);
      (void)::tcsetattr(slave, TCSANOW, &mode);
    }
    if (slave >= 0) {
      ::close(slave);
    }
  }
  ~PtyEnd() {
    if (master >= 0) {
      ::close(master);
    }
  }
};

// Copies bytes between two pseudo-terminals' masters both ways until told to stop.
void join_lines(int a, int b, const std::atomic<bool>& stop) {
  char buf[4096];
  while (!stop) {
    pollfd fds[2] = {{a, POLLIN, 0}, {b, POLLIN, 0}};
    if (::poll(fds, 2, 50) <= 0) {
      continue;
    }
    for (int i = 0; i < 2; ++i) {
      if ((fds[i].revents & POLLIN) != 0) {
        const ssize_t n = ::read(fds[i].fd, buf, sizeof buf);
        if (n > 0) {
          (void)!::write(fds[1 - i].fd, buf, static_cast<size_t>(n));
        }
      } else if ((fds[i].revents & (POLLHUP | POLLERR)) != 0) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));  // that slave is not open (yet)
      }
    }
  }
}

}  // namespace

TEST_CASE("a serial device COMM, as gdbserver: GDB at the other end of the line debugs the program",
          "[e2e][cli]") {
  e2e::require_server_exists();
  e2e::become_subreaper();
  auto before = e2e::current_children();
  PtyEnd server_end, gdb_end;
  REQUIRE(!server_end.path.empty());
  REQUIRE(!gdb_end.path.empty());
  std::atomic<bool> stop{false};
  std::thread cable(join_lines, server_end.master, gdb_end.master, std::cref(stop));
  {
    e2e::Child server({.argv = {e2e::server_path(), "--once", server_end.path, e2e::prog_path("simple")}});
    REQUIRE(server.wait_for_text("Remote debugging using " + server_end.path, e2e::Clock::now() + kExitTimeout));
    debug_simple_through(server, gdb_end.path, ServerEnd::on_sigterm);
  }
  stop = true;
  cable.join();
  e2e::kill_stray_children(before);
}

TEST_CASE("a serial device that cannot be opened: gdbserver's words, no program started", "[e2e][cli]") {
  auto f = run_server({"--once", "/nonexistent/ttyS9", e2e::prog_path("simple")});
  INFO("status: " << e2e::describe_status(f.status) << "\nstderr:\n" << f.err);
  CHECK(e2e::exit_code(f.status) == 1);
  CHECK_THAT(f.err, Contains("Could not open remote device: No such file or directory.\nExiting"));
  CHECK_THAT(f.err, !Contains("created; pid"));
}

TEST_CASE("listening beyond loopback needs a host and prints a warning", "[e2e][cli]") {
  e2e::require_server_exists();
  e2e::become_subreaper();
  auto before = e2e::current_children();
  {
    // A bare :PORT is loopback only, silently.
    e2e::Child local({.argv = {e2e::server_path(), "--once", ":0", e2e::prog_path("simple")}});
    REQUIRE(local.wait_for_text("Listening on port", e2e::Clock::now() + kExitTimeout));
    CHECK_THAT(local.err(), !Contains("warning"));
    // 0.0.0.0 is honoured, with the warning (nothing connects to it).
    e2e::Child wide({.argv = {e2e::server_path(), "--once", "0.0.0.0:0", e2e::prog_path("simple")}});
    REQUIRE(wide.wait_for_text("Listening on port", e2e::Clock::now() + kExitTimeout));
    CHECK_THAT(wide.err(), Contains("warning: listening on 0.0.0.0"));
    local.kill_and_reap();
    wide.kill_and_reap();
  }
  e2e::kill_stray_children(before);
}

TEST_CASE("--help and --version print and exit 0; a bad option exits 1", "[e2e][cli]") {
  auto help = run_server({"--help"});
  CHECK(e2e::exit_code(help.status) == 0);
  CHECK_THAT(help.out, Contains("--attach"));
  auto version = run_server({"--version"});
  CHECK(e2e::exit_code(version.status) == 0);
  CHECK_THAT(version.out, Contains("Hindsight"));
  auto bad = run_server({"--no-such-option", ":0", "prog"});
  CHECK(e2e::exit_code(bad.status) == 1);
  CHECK_THAT(bad.err, Contains("--help"));
}

namespace {

// What `--version` says of a collector: "yes ..." or "no: WHY".
std::string version_says(const std::string& version, const std::string& collector) {
  std::string padded = collector;
  padded.resize(7, ' ');  // the widest name (inproc) and a space
  const auto at = version.find("\n  " + padded);
  if (at == std::string::npos) {
    return "";
  }
  const auto start = at + 3 + padded.size();
  return version.substr(start, version.find('\n', start) - start);
}

}  // namespace

TEST_CASE("--version says which collectors work here, in the words the server falls back with",
          "[e2e][cli][installed]") {
  if (e2e::server_path().find("gdbserver") != std::string::npos) {
    HS_SKIP("--version's collectors are Hindsight's own: the server under test is " + e2e::server_path());
  }
  auto version = run_server({"--version"});
  INFO(version.out);
  CHECK(e2e::exit_code(version.status) == 0);
  CHECK_THAT(version.out, Contains("History collectors on this machine (--btrace):\n"));
  CHECK(version_says(version.out, "soft") == "yes");
  CHECK(version_says(version.out, "step") == "yes");
  CHECK(version_says(version.out, "inproc").starts_with("yes ("));  // the build tree's library
  // BTS: where it is refused, triage --btrace=bts refuses it with the same words.
  const std::string bts = version_says(version.out, "bts");
  REQUIRE_FALSE(bts.empty());
  if (bts != "yes") {
    REQUIRE(bts.starts_with("no: "));
    auto refused = run_server({"triage", "--btrace=bts", "--", "/bin/true"});
    CHECK_THAT(refused.err, Contains(bts.substr(4)));
  }
  // dbt: as it is built here; a recorder folder that is not there, in triage's words too.
  if (HS_DBT_BUILT) {
    CHECK(version_says(version.out, "dbt").starts_with("yes ("));
  }
  const test_support::ScopedEnv missing("HINDSIGHT_DBT_LIB", "/nonexistent-hindsight-dbt");
  auto without = run_server({"--version"});
  const std::string dbt = version_says(without.out, "dbt");
  CHECK(dbt == "no: the dbt recorder is not installed (no /nonexistent-hindsight-dbt/hsdbt-amd64-linux; install "
               "the hindsight-dbt package)");
  auto refused = run_server({"triage", "--btrace=dbt", "--", "/bin/true"});
  CHECK_THAT(refused.err, Contains(dbt.substr(4)));
}

TEST_CASE("--help names the files --version says this binary uses (the recorder set by its variable too)",
          "[e2e][cli][installed]") {
  if (e2e::server_path().find("gdbserver") != std::string::npos) {
    HS_SKIP("the files are Hindsight's own: the server under test is " + e2e::server_path());
  }
  const test_support::ScopedEnv recorder("HINDSIGHT_RECORDER_LIB", "/elsewhere/libhindsight-recorder.so");
  auto version = run_server({"--version"});
  auto help = run_server({"--help"});
  INFO(version.out << "\n---\n" << help.out);
  CHECK_THAT(version_says(version.out, "inproc"), Contains("/elsewhere/libhindsight-recorder.so"));
  const std::string files = help.out.substr(help.out.find("\nFiles:\n"));
  CHECK_THAT(files, Contains("\n  /elsewhere/libhindsight-recorder.so\n"));
  const std::string agent_line = "Fast tracepoints: the agent is ";
  if (const auto at = version.out.find(agent_line); at != std::string::npos) {
    const auto start = at + agent_line.size();
    const std::string agent = version.out.substr(start, version.out.find('\n', start) - start);
    CHECK_THAT(files, Contains("\n  " + agent + "\n"));
    CHECK_THAT(files, Contains("LD_PRELOAD=" + agent + " "));
  }
  if (HS_DBT_BUILT) {
    const std::string dbt = version_says(version.out, "dbt");
    REQUIRE(dbt.starts_with("yes ("));
    CHECK_THAT(files, Contains("\n  " + dbt.substr(5, dbt.size() - 6) + "\n"));
  }
}

TEST_CASE("--btrace-scope needs the software tracer; a bad scope or size is refused", "[e2e][cli][btrace]") {
  for (const char* backend : {"--btrace=step", "--btrace=bts"}) {
    auto r = run_server({backend, "--btrace-scope=exe", ":0", "/bin/true"});
    CHECK(e2e::exit_code(r.status) == 1);
    CHECK_THAT(r.err, Contains("--btrace-scope needs the software tracer"));
  }
  auto empty = run_server({"--btrace-scope=exe,,x", ":0", "/bin/true"});
  CHECK(e2e::exit_code(empty.status) == 1);
  CHECK_THAT(empty.err, Contains("--btrace-scope"));
  auto size = run_server({"--btrace-max-size=lots", ":0", "/bin/true"});
  CHECK(e2e::exit_code(size.status) == 1);
  CHECK_THAT(size.err, Contains("--btrace-max-size"));
}

TEST_CASE("--btrace=dbt starts the program itself: no --attach, --multi, scope or wrapper", "[e2e][cli][btrace]") {
  const std::vector<std::vector<std::string>> refused = {
      {"--btrace=dbt", "--attach", ":0", "1"},
      {"--btrace=dbt", ":0", "--attach", "1"},
      {"--btrace=dbt", "--multi", ":0"},
      {"--btrace=dbt", "--btrace-scope=exe", ":0", "/bin/true"},
      {"--btrace=dbt", "--wrapper", "env", "--", ":0", "/bin/true"},
  };
  for (const auto& args : refused) {
    auto r = run_server(args);
    CHECK(e2e::exit_code(r.status) == 1);
    CHECK_THAT(r.err, Contains("--btrace=dbt starts PROG under the recorder: not with --attach, --multi, "
                               "--btrace-scope or --wrapper"));
  }
}

TEST_CASE("hindsight under another tracer refuses to run the program untraced", "[e2e][cli]") {
  if (::access("/usr/bin/strace", X_OK) != 0) {
    HS_SKIP("strace is not installed");
  }
  e2e::require_server_exists();
  // strace -f already traces hindsight's child, so the child's PTRACE_TRACEME fails.
  e2e::become_subreaper();
  auto before = e2e::current_children();
  Finished traced;
  {
    e2e::Child strace({.argv = {"/usr/bin/strace", "-f", "-o", "/dev/null", e2e::server_path(), "--once", ":0",
                                e2e::prog_path("simple")}});
    traced.status = strace.wait(e2e::Clock::now() + kExitTimeout);
    strace.kill_and_reap();
    traced.out = strace.out();
    traced.err = strace.err();
  }
  e2e::kill_stray_children(before);
  INFO("stderr:\n" << traced.err << "\nstdout:\n" << traced.out);
  REQUIRE(traced.status.has_value());
  CHECK(e2e::exit_code(traced.status) == 1);
  CHECK_THAT(traced.err, Contains("PTRACE_TRACEME"));
  CHECK_THAT(traced.out, !Contains("sum="));  // the program never ran
}
