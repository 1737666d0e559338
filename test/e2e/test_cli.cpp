// Bad input at the process level: what the server says and how it exits.
#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "test/e2e/gdb_session.hpp"

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
    CHECK_THAT(f.err, !Contains("Listening on port"));
  }
  SECTION("--no-startup-with-shell") {
    auto f = run_server({"--once", "--no-startup-with-shell", port, missing});
    INFO("status: " << e2e::describe_status(f.status) << "\nstderr:\n" << f.err);
    REQUIRE(f.status.has_value());
    CHECK(e2e::exit_code(f.status) > 0);
    CHECK_THAT(f.err, Contains(missing));
    CHECK_THAT(f.err, !Contains("Listening on port"));
  }
}

TEST_CASE("a port in use: Address already in use, non-zero exit", "[e2e][cli]") {
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
  CHECK_THAT(f.err, Contains("Address already in use"));
  // The inferior must not have run on its own.
  CHECK_THAT(f.out, !Contains("sum="));
}
