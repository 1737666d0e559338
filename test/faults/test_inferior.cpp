// Faults on the inferior's side: killed from outside while stopped and while running, memory
// that cannot be read or written, a connection dropped while a thousand threads stop, signals
// to the server while it holds breakpoints in an attached program. Each case checks what
// became of the inferior (killed, or running on with its code as the file has it) and of the
// server (serving on, or ended cleanly).
#include <catch2/catch.hpp>

#include <signal.h>

#include <thread>

#include "test/e2e/collectors.hpp"
#include "test/e2e/gdb_session.hpp"
#include "test/e2e/process.hpp"
#include "test/e2e/rsp_client.hpp"
#include "test/faults/fault_support.hpp"

using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;
using namespace std::chrono_literals;

namespace {

// A server that started prog (--once), with a raw client connected and the stop at its start.
struct Started {
  e2e::Child server;
  pid_t inferior = 0;
  std::unique_ptr<e2e::RspClient> client;

  explicit Started(const std::vector<std::string>& program_and_args, std::vector<std::string> flags = {})
      : server(e2e::SpawnOptions{.argv = argv_for(program_and_args, std::move(flags))}) {
    const int port = e2e::listening_port(server);
    inferior = faults::started_pid(server);
    client = std::make_unique<e2e::RspClient>(port);
    REQUIRE(client->request("qSupported:multiprocess+;swbreak+").has_value());
    REQUIRE(client->request("?").value_or("").starts_with("T"));
  }

  static std::vector<std::string> argv_for(const std::vector<std::string>& program, std::vector<std::string> flags) {
    e2e::require_server_exists();
    e2e::become_subreaper();
    std::vector<std::string> argv = {e2e::server_path()};
    argv.insert(argv.end(), flags.begin(), flags.end());
    argv.insert(argv.end(), {"--once", ":0", e2e::prog_path(program[0])});
    argv.insert(argv.end(), program.begin() + 1, program.end());
    return argv;
  }
};

std::string hex_addr(unsigned long addr) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%lx", addr);
  return buf;
}

// With its last process gone the server still answers (GDB 16 reads files then), as gdbserver;
// when the client leaves, it ends.
void ends_with_the_session(Started& s) {
  CHECK(s.client->request("vMustReplyEmpty", 2000ms) == std::optional<std::string>(""));
  s.client.reset();
  const auto status = s.server.wait(e2e::Clock::now() + 5s);
  CHECK(e2e::exit_code(status) == 0);
}

}  // namespace

TEST_CASE("the inferior SIGKILLed from outside while stopped: the next resume reports X09, the server ends with "
          "the session",
          "[faults][inferior]") {
  Started s({"sleeper", "60"});
  ::kill(s.inferior, SIGKILL);
  std::this_thread::sleep_for(100ms);
  // Registers were read at the stop: still answered, the thread is only reported gone later.
  CHECK(s.client->request("g", 2000ms).has_value());
  auto reply = s.client->request("vCont;c", 5000ms);
  INFO("server: " << s.server.err());
  REQUIRE(reply.has_value());
  CHECK_THAT(*reply, StartsWith("X09"));
  ends_with_the_session(s);
  CHECK(faults::process_gone(s.inferior));
}

TEST_CASE("the inferior SIGKILLed from outside while running: X09 at once, the server ends with the session",
          "[faults][inferior]") {
  // Under ptrace, and under the dbt recorder (where Valgrind itself dies: vgdb closes the link
  // with no stop reply, and the server tells GDB from the program's status).
  const std::string collector = GENERATE("ptrace", "dbt");
  INFO("running under " << collector);
  SKIP_IF_NOT_BUILT(collector);
  Started s({"sleeper", "60"}, collector == "dbt" ? std::vector<std::string>{"--btrace=dbt"} : std::vector<std::string>{});
  REQUIRE(s.client->send_packet("vCont;c"));
  REQUIRE(s.client->read_ack() == '+');
  std::this_thread::sleep_for(200ms);
  ::kill(s.inferior, SIGKILL);
  auto reply = s.client->read_packet(5000ms);
  INFO("server: " << s.server.err());
  REQUIRE(reply.has_value());
  CHECK_THAT(*reply, StartsWith("X09"));
  ends_with_the_session(s);
}

TEST_CASE("reads and writes of unmapped and kernel memory are errors; the program runs on untouched",
          "[faults][inferior][memory]") {
  Started s({"simple"});
  auto code = faults::program_code(s.inferior);
  REQUIRE(code.has_value());
  const std::string text = hex_addr(code->start);
  const std::vector<std::string> refused = {"m0,8", "m10,1000", "mffffffffff600000,8", "mffffffffffffff00,200", "M0,4:01020304",
        "Mffffffffff600000,1:cc", "X0,1:a", "M" + hex_addr(0x1000) + ",2:9090", "Z0,8,1"};
  for (const std::string& packet : refused) {
    INFO("packet " << packet);
    auto reply = s.client->request(packet, 3000ms);
    REQUIRE(reply.has_value());
    CHECK_THAT(*reply, StartsWith("E"));
  }
  // A write to read-only text goes through, as with gdbserver (ptrace writes code), and back.
  auto original = s.client->request("m" + text + ",4");
  REQUIRE(original.has_value());
  REQUIRE(original->size() == 8);
  CHECK(s.client->request("M" + text + ",4:cccccccc") == std::optional<std::string>("OK"));
  CHECK(s.client->request("m" + text + ",4") == std::optional<std::string>("cccccccc"));
  CHECK(s.client->request("M" + text + ",4:" + *original) == std::optional<std::string>("OK"));
  auto after = faults::program_code(s.inferior);
  REQUIRE(after.has_value());
  CHECK(after->bytes == code->bytes);
  auto end = s.client->request("vCont;c", 5000ms);
  INFO("server: " << s.server.err());
  CHECK(end.value_or("").starts_with("W07"));
}

TEST_CASE("the connection dropped while a thousand threads stop: every one killed, the server ends",
          "[faults][inferior][threads]") {
  auto before = e2e::current_children();
  pid_t inferior = 0;
  {
    Started s({"mt", "many", "1000"});
    inferior = s.inferior;
    REQUIRE(s.client->send_packet("vCont;c"));
    REQUIRE(s.client->read_ack() == '+');
    std::this_thread::sleep_for(500ms);  // the threads exist and run
    REQUIRE(s.client->send_raw("\x03"));
    s.client.reset();  // gone before the stop is reported
    const auto status = s.server.wait(e2e::Clock::now() + 30s);
    INFO("server: " << s.server.err());
    REQUIRE(status.has_value());
    CHECK(e2e::exit_code(status) == 0);
  }
  std::this_thread::sleep_for(100ms);
  CHECK(faults::process_gone(inferior));
  CHECK(e2e::kill_stray_children(before) == 0);
}

TEST_CASE("SIGTERM or SIGINT to the server while it runs a program it started: the program is killed",
          "[faults][signals]") {
  const int sig = GENERATE(SIGTERM, SIGINT);
  INFO("signal " << sig);
  Started s({"sleeper", "60"});
  REQUIRE(s.client->send_packet("vCont;c"));
  REQUIRE(s.client->read_ack() == '+');
  std::this_thread::sleep_for(200ms);
  ::kill(s.server.pid(), sig);
  const auto status = s.server.wait(e2e::Clock::now() + 5s);
  INFO("server: " << s.server.err());
  REQUIRE(status.has_value());
  std::this_thread::sleep_for(100ms);
  CHECK(faults::process_gone(s.inferior));
}

TEST_CASE("SIGTERM or SIGINT to the server with breakpoints in an attached, running program: detached, "
          "its code as before, it runs on",
          "[faults][signals]") {
  const int sig = GENERATE(SIGTERM, SIGINT);
  INFO("signal " << sig);
  e2e::require_server_exists();
  e2e::Child sleeper({.argv = {e2e::prog_path("sleeper"), "60"}});
  REQUIRE(sleeper.wait_for_text("pid=", e2e::Clock::now() + 5s, true));
  auto code = faults::program_code(sleeper.pid());
  REQUIRE(code.has_value());
  e2e::Child server({.argv = {e2e::server_path(), "--once", "--attach", ":0", std::to_string(sleeper.pid())}});
  e2e::RspClient client(e2e::listening_port(server));
  REQUIRE(client.request("?").has_value());
  // int3s spread over the program's code (some in its loop, most never reached).
  int planted = 0;
  for (unsigned long offset = 0x10; offset < code->bytes.size(); offset += code->bytes.size() / 16) {
    planted += client.request("Z0," + hex_addr(code->start + offset) + ",1") == std::optional<std::string>("OK");
  }
  REQUIRE(planted >= 8);
  REQUIRE(client.send_packet("vCont;c"));
  REQUIRE(client.read_ack() == '+');
  std::this_thread::sleep_for(100ms);
  ::kill(server.pid(), sig);
  const auto status = server.wait(e2e::Clock::now() + 5s);
  INFO("server: " << server.err());
  REQUIRE(status.has_value());
  std::this_thread::sleep_for(100ms);
  CHECK(e2e::tracer_of(sleeper.pid()) == 0);
  const char state = e2e::proc_state(sleeper.pid());
  CHECK((state == 'S' || state == 'R'));
  auto after = faults::program_code(sleeper.pid());
  REQUIRE(after.has_value());
  CHECK(after->bytes == code->bytes);
}
