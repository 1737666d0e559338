// Faults around the connection: accept failing and recovering, junk on the wire, GDB killed
// mid-session, SIGTERM to the server. Each case checks what became of the inferior and that the
// server kept serving or ended cleanly.
#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <filesystem>
#include <set>
#include <thread>

#include "test/e2e/gdb_session.hpp"
#include "test/e2e/process.hpp"
#include "test/e2e/rsp_client.hpp"
#include "test/faults/fault_support.hpp"

using Catch::Matchers::Contains;
using namespace std::chrono_literals;
using e2e::listening_port;
using faults::process_gone;

namespace {

// The descriptor number process pid would get next (the lowest one free).
int next_fd(pid_t pid) {
  std::set<int> open;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/fd")) {
    open.insert(std::stoi(entry.path().filename().string()));
  }
  int fd = 0;
  while (open.count(fd) != 0) {
    ++fd;
  }
  return fd;
}

// Sets the soft limit on descriptors of pid (the hard limit stays).
bool set_fd_limit(pid_t pid, rlim_t soft) {
  rlimit now{};
  if (::prlimit(pid, RLIMIT_NOFILE, nullptr, &now) != 0) {
    return false;
  }
  const rlimit value{soft, now.rlim_max};
  return ::prlimit(pid, RLIMIT_NOFILE, &value, nullptr) == 0;
}

}  // namespace

TEST_CASE("accept fails for want of descriptors (EMFILE): said once, retried, the connection served",
          "[faults][connection]") {
  e2e::require_server_exists();
  e2e::Child server({.argv = {e2e::server_path(), "--multi", ":0"}});
  const int port = listening_port(server);
  // No descriptor left for the next connection: the limit at the lowest free descriptor, set
  // again until the server's own descriptors have settled (one it closes after starting up
  // would leave a free one below the limit).
  int limit = -1;
  for (int tries = 0; tries < 20 && limit != next_fd(server.pid()); ++tries) {
    limit = next_fd(server.pid());
    REQUIRE(set_fd_limit(server.pid(), static_cast<rlim_t>(limit)));
    std::this_thread::sleep_for(100ms);
  }
  INFO("fd limit " << limit << "; server: " << server.err());
  REQUIRE(limit == next_fd(server.pid()));
  e2e::RspClient client(port);
  REQUIRE(server.wait_for_text("cannot accept a connection", e2e::Clock::now() + 5s));
  CHECK_FALSE(client.request("qSupported", 300ms).has_value());  // waiting in the backlog
  std::this_thread::sleep_for(300ms);
  REQUIRE(set_fd_limit(server.pid(), 1024));
  auto reply = client.request("qSupported", 3000ms);
  INFO("server: " << server.err());
  REQUIRE(reply.has_value());
  CHECK_THAT(*reply, Contains("PacketSize="));
  CHECK_THAT(server.err(), Contains("warning: cannot accept a connection: Too many open files; trying again"));
  // Said once for the whole run of failures, not every 100 ms.
  const std::string& err = server.err();
  CHECK(err.find("cannot accept") == err.rfind("cannot accept"));
  CHECK(client.request("vKill;1", 1000ms).has_value());  // still a working session
}

TEST_CASE("junk on the wire: binary noise, bad checksums, truncated and overlong packets, a packet "
          "flood; the session answers the next good packet",
          "[faults][connection]") {
  e2e::require_server_exists();
  e2e::Child server({.argv = {e2e::server_path(), "--once", ":0", e2e::prog_path("simple")}});
  const int port = listening_port(server);
  e2e::RspClient client(port);
  std::string noise;
  for (int i = 0; i < 4096; ++i) {
    // (No 0x03: that is Ctrl-C, which the server keeps for the next resume, by design.)
    const char c = static_cast<char>((i * 131 + 7) & 0xff);
    noise.push_back(c == '\x03' ? '\x04' : c);
  }
  CHECK(client.send_raw(noise));
  CHECK(client.send_raw("$qC#00"));                        // bad checksum
  CHECK(client.send_raw("$m401000,4"));                    // truncated: never finished...
  CHECK(client.send_raw("$" + std::string(70000, 'g') + "#00"));  // ...then overlong
  for (int i = 0; i < 2000; ++i) {                         // a packet flood, no reading
    CHECK(client.send_packet("qC"));
  }
  // Everything above is answered or dropped; a good packet still gets its answer.
  int answers = 0;
  while (auto reply = client.read_packet(answers == 0 ? 5000ms : 500ms)) {
    answers += reply->starts_with("QC") ? 1 : 0;
  }
  CHECK(answers > 0);
  CHECK_FALSE(client.closed());
  const auto end = client.request("vCont;c", 10000ms);
  INFO("answers to the flood: " << answers << "; the reply to vCont;c: " << end.value_or("(none)"));
  REQUIRE(end.value_or("").starts_with("W07"));
  client.close();  // the server, its program gone, ends with the session
  auto status = server.wait(e2e::Clock::now() + 5s);
  INFO("server: " << server.err());
  CHECK(e2e::exit_code(status) == 0);
}

TEST_CASE("GDB killed with SIGKILL mid-continue: the program the server started is killed, the server ends",
          "[faults][connection]") {
  e2e::require_server_exists();
  e2e::become_subreaper();
  e2e::Child server({.argv = {e2e::server_path(), "--once", ":0", e2e::prog_path("sleeper"), "60"}});
  const int port = listening_port(server);
  REQUIRE(server.wait_for_text("created; pid = ", e2e::Clock::now() + 5s));
  const std::string& err = server.err();
  const pid_t inferior = std::stoi(err.substr(err.find("created; pid = ") + 15));
  e2e::Child gdb({.argv = e2e::gdb_batch_argv({"-ex",
                           "target remote 127.0.0.1:" + std::to_string(port), "-ex", "continue"}),
                  .merge_stderr = true});
  for (int i = 0; i < 100 && e2e::proc_state(inferior) != 'S' && e2e::proc_state(inferior) != 'R'; ++i) {
    std::this_thread::sleep_for(50ms);  // until the program runs
  }
  std::this_thread::sleep_for(300ms);
  ::kill(gdb.pid(), SIGKILL);
  auto status = server.wait(e2e::Clock::now() + 5s);
  INFO("gdb: " << gdb.out() << "\nserver: " << server.err());
  REQUIRE(status.has_value());
  CHECK(e2e::exit_code(status) == 0);
  std::this_thread::sleep_for(100ms);
  CHECK(process_gone(inferior));
}

TEST_CASE("SIGTERM to a server serving an attached program: detached clean, it runs on", "[faults][signals]") {
  e2e::require_server_exists();
  e2e::Child sleeper({.argv = {e2e::prog_path("sleeper"), "60"}});
  REQUIRE(sleeper.wait_for_text("pid=", e2e::Clock::now() + 5s, true));
  e2e::Child server({.argv = {e2e::server_path(), "--once", "--attach", ":0", std::to_string(sleeper.pid())}});
  const int port = listening_port(server);
  e2e::RspClient client(port);
  REQUIRE(client.request("?").has_value());
  REQUIRE(e2e::tracer_of(sleeper.pid()) == server.pid());
  ::kill(server.pid(), SIGTERM);
  auto status = server.wait(e2e::Clock::now() + 5s);
  INFO("server: " << server.err());
  REQUIRE(status.has_value());
  std::this_thread::sleep_for(100ms);
  CHECK(e2e::tracer_of(sleeper.pid()) == 0);
  const char state = e2e::proc_state(sleeper.pid());
  INFO("sleeper state " << state);
  CHECK((state == 'S' || state == 'R'));
}
