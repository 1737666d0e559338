// Many sessions against one long-lived --multi server: what each session leaves behind in the
// server (descriptors, resident memory) must not grow. Each session is what GDB does for a
// short run: connect, qSupported, start the program (vRun), read its registers and memory,
// open its file over vFile (and never close it), kill it (vKill), disconnect.
#include <catch2/catch.hpp>

#include <cstdio>

#include "test/e2e/gdb_session.hpp"
#include "test/e2e/process.hpp"
#include "test/e2e/rsp_client.hpp"
#include "test/faults/fault_support.hpp"

using Catch::Matchers::StartsWith;
using namespace std::chrono_literals;

namespace {

std::string to_hex(const std::string& text) {
  std::string out;
  char buf[3];
  for (unsigned char c : text) {
    std::snprintf(buf, sizeof buf, "%02x", c);
    out += buf;
  }
  return out;
}

// One session; false (with the reason in `why`) if any answer is not what GDB would accept.
bool one_session(int port, const std::string& program_hex, std::string& why) {
  e2e::RspClient c(port);
  auto supported = c.request("qSupported:multiprocess+;swbreak+;fork-events+;vfork-events+");
  if (!supported || supported->find("PacketSize=") == std::string::npos) {
    why = "qSupported: " + supported.value_or("(none)");
    return false;
  }
  // Extended mode, as GDB's target extended-remote asks: without it the server ends once GDB
  // leaves with nothing to debug (gdbserver's rule), --multi or not.
  if (c.request("!") != std::optional<std::string>("OK")) {
    why = "! was not answered OK";
    return false;
  }
  auto run = c.request("vRun;" + program_hex, 5000ms);
  if (!run || !run->starts_with("T")) {
    why = "vRun: " + run.value_or("(none)");
    return false;
  }
  const auto pid_at = run->find("thread:p");
  const std::string pid = pid_at == std::string::npos ? "" : run->substr(pid_at + 8, run->find('.', pid_at) - pid_at - 8);
  auto regs = c.request("g");
  auto file = c.request("vFile:open:" + program_hex + ",0,0");
  if (!regs || regs->size() < 100 || !file || !file->starts_with("F")) {
    why = "g / vFile:open: " + regs.value_or("(none)").substr(0, 20) + " / " + file.value_or("(none)");
    return false;
  }
  auto killed = c.request("vKill;" + pid, 5000ms);
  if (killed != std::optional<std::string>("OK")) {
    why = "vKill;" + pid + ": " + killed.value_or("(none)");
    return false;
  }
  return true;
}

}  // namespace

TEST_CASE("1000 sequential sessions against one --multi server: descriptors and memory stay flat",
          "[faults][sessions]") {
  e2e::require_server_exists();
  e2e::become_subreaper();
  auto before = e2e::current_children();
  e2e::Child server({.argv = {e2e::server_path(), "--multi", ":0"}});
  const int port = e2e::listening_port(server);
  const std::string program = to_hex(e2e::prog_path("simple"));
  std::string why;
  // Warm-up: the first sessions fill caches and the allocator's pools.
  // (The server's stderr is read between sessions, or its pipe would fill and stop it.)
  auto drain = [&server] { server.pump_until(e2e::Clock::now() + 1ms, [] { return false; }); };
  for (int i = 0; i < 100; ++i) {
    REQUIRE(one_session(port, program, why));
    drain();
  }
  const int fds_before = faults::open_fds(server.pid());
  const long rss_before = faults::resident_kib(server.pid());
  int failed = 0;
  for (int i = 0; i < 1000; ++i) {
    if (!one_session(port, program, why)) {
      ++failed;
      UNSCOPED_INFO("session " << i << ": " << why);
    }
    drain();
  }
  const int fds_after = faults::open_fds(server.pid());
  const long rss_after = faults::resident_kib(server.pid());
  std::printf("HINDSIGHT-FIGURE: 1000 sessions: descriptors %d -> %d, resident %ld KiB -> %ld KiB\n", fds_before,
              fds_after, rss_before, rss_after);
  INFO("server: " << server.err().substr(0, 2000));
  CHECK(failed == 0);
  CHECK(fds_after == fds_before);
  if (!faults::sanitized(server.pid())) {
    CHECK(rss_after - rss_before < 1024);  // less than 1 KiB a session
  }
  CHECK(e2e::kill_stray_children(before) == 1);  // the server alone
}

TEST_CASE("25 real GDB sessions against one --multi server: run, break, kill; descriptors stay flat",
          "[faults][sessions]") {
  e2e::require_server_exists();
  e2e::become_subreaper();
  auto before = e2e::current_children();
  e2e::Child server({.argv = {e2e::server_path(), "--multi", ":0"}});
  const std::string target = "target extended-remote 127.0.0.1:" + std::to_string(e2e::listening_port(server));
  const std::string program = e2e::prog_path("simple");
  auto session = [&] {
    e2e::Child gdb({.argv = e2e::gdb_batch_argv({"-ex", target,
                             "-ex", "set remote exec-file " + program, "-ex", "file " + program, "-ex",
                             "break sum_squares", "-ex", "run", "-ex", "info registers rip", "-ex", "kill"}),
                    .merge_stderr = true});
    const auto status = gdb.wait(e2e::Clock::now() + 20s);
    server.pump_until(e2e::Clock::now() + 1ms, [] { return false; });
    return e2e::exit_code(status) == 0 && gdb.out().find("Breakpoint 1, sum_squares") != std::string::npos;
  };
  REQUIRE(session());
  const int fds_before = faults::open_fds(server.pid());
  int good = 0;
  for (int i = 0; i < 25; ++i) {
    good += session() ? 1 : 0;
  }
  const int fds_after = faults::open_fds(server.pid());
  std::printf("HINDSIGHT-FIGURE: 25 GDB sessions: descriptors %d -> %d\n", fds_before, fds_after);
  INFO("server: " << server.err().substr(0, 2000));
  CHECK(good == 25);
  CHECK(fds_after == fds_before);
  CHECK(e2e::kill_stray_children(before) == 1);
}
