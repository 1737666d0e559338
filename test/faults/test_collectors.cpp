// Faults while history is recorded or threads churn: every history collector detaching from a
// recording process (the program finishes right, no int3 of its collector left), GDB stepping
// one thread while others are born and die in a storm, GDB gone in the middle of a packet.
#include <catch2/catch.hpp>

#include <signal.h>

#include <thread>

#include "test/e2e/collectors.hpp"
#include "test/e2e/gdb_session.hpp"
#include "test/e2e/matchers.hpp"
#include "test/e2e/process.hpp"
#include "test/e2e/rsp_client.hpp"
#include "test/faults/fault_support.hpp"

using Catch::Matchers::Contains;
using e2e::ContainsRegex;
using namespace std::chrono_literals;

TEST_CASE("every history collector detaching from a program it records: the program finishes right",
          "[faults][btrace]") {
  const std::string collector = GENERATE("soft", "step", "dbt", "bts");
  INFO("collector: " << collector);
  SKIP_IF_NOT_BUILT(collector);
  // workers checks its own results every round: a branch the collector left planted or an
  // instruction it broke would make them differ ("workers wrong") or kill it.
  const std::vector<std::string> commands = {"break checksum", "continue",    "record btrace", "continue",
                                             "continue",       "info record", "detach"};
  if (collector == "dbt") {
    // The recorder runs the program under Valgrind from its start: the server launches it, and
    // after the detach it runs on under Valgrind, recording nothing, while the server waits for
    // it. Its clock outlives the session: GDB itself ends it (SIGUSR1) a second after the detach,
    // which fails if the program is gone or if the detach waited for it to end.
    std::vector<std::string> dbt_commands = commands;
    dbt_commands.insert(dbt_commands.end() - 1, "python hs_pid = gdb.selected_inferior().pid");
    dbt_commands.insert(
        dbt_commands.end(),
        {"shell sleep 1",
         "python import os, signal; os.kill(hs_pid, signal.SIGUSR1); print('signalled', hs_pid)"});
    auto out = e2e::run_gdb({.program = "workers",
                             .commands = dbt_commands,
                             .args = {"120"},
                             .timeout = 90s,
                             .server_flags = {"--btrace=dbt"}});
    INFO(out.transcript());
    CHECK_THAT(out.gdb, ContainsRegex(R"(Recorded \d+ instructions in \d+ functions)"));
    CHECK_THAT(out.gdb, ContainsRegex(R"(\[Inferior 1 \(process \d+\) detached\])"));
    CHECK_THAT(out.gdb, ContainsRegex(R"(signalled [1-9]\d*)"));
    CHECK_THAT(out.server_out, Contains("workers ok"));
    CHECK(e2e::exit_code(out.server_status) == 0);
    return;
  }
  // Long enough to outlive a slow session; ended by SIGUSR1 once its code is read back.
  e2e::Child workers({.argv = {e2e::prog_path("workers"), "120"}});
  REQUIRE(workers.wait_for_text("threads=4", e2e::Clock::now() + 5s, true));
  auto code = faults::program_code(workers.pid());
  REQUIRE(code.has_value());
  auto out = e2e::run_gdb({.commands = commands,
                           .transport = e2e::Transport::attach,
                           .attach_pid = workers.pid(),
                           .timeout = 90s,
                           .server_flags = {"--btrace=" + collector}});
  INFO(out.transcript());
  if (collector == "bts" && out.gdb.find("Could not enable branch tracing") != std::string::npos) {
    HS_SKIP(
        "this machine has no Intel BTS (perf_event_open for branch samples fails): the bts collector "
        "cannot record here");
  }
  CHECK_THAT(out.gdb, ContainsRegex(R"(Recorded \d+ instructions in \d+ functions)"));
  CHECK_THAT(out.gdb, ContainsRegex(R"(\[Inferior 1 \(process \d+\) detached\])"));
  auto after = faults::program_code(workers.pid());
  REQUIRE(after.has_value());
  CHECK(after->bytes == code->bytes);  // no int3 of the collector left behind
  ::kill(workers.pid(), SIGUSR1);
  const auto status = workers.wait(e2e::Clock::now() + 30s);
  INFO("workers: " << e2e::describe_status(status) << "\n" << workers.out());
  CHECK(e2e::exit_code(status) == 0);
  CHECK_THAT(workers.out(), Contains("workers ok"));
}

TEST_CASE("GDB steps one thread while 1000 threads are born and die around it", "[faults][threads]") {
  // 20 rounds of 50 threads. 140 lines one `next` at a time (GDB ends a `next N` early at a
  // thread event): the 50 joins of one round, the creates of the next, its tick, ...
  std::vector<std::string> commands = {"break tick if n == 5", "continue", "delete"};
  commands.insert(commands.end(), 140, "next");
  commands.insert(commands.end(), {"info threads", "continue"});
  auto out = e2e::run_gdb(
      {.program = "mt", .commands = commands, .args = {"storm", "50"}, .timeout = std::chrono::seconds(90)});
  INFO(out.transcript());
  CHECK_THAT(out.gdb, Contains("Breakpoint 1, tick (n=5)"));
  // Stepped through the joins of round 5 into round 6, whose threads were born meanwhile.
  CHECK_THAT(out.gdb, ContainsRegex(R"(\n\d+\s+pthread_join[^\n]*\n[\s\S]*\n\d+\s+pthread_create)"));
  CHECK_THAT(out.gdb, !Contains("Cannot"));
  CHECK_THAT(out.gdb, Contains("exited normally"));
  CHECK_THAT(out.server_out, Contains("storm done"));
  CHECK(out.stray_processes == 0);
}

TEST_CASE("GDB gone in the middle of a packet: the program the server started is killed, the server ends",
          "[faults][connection]") {
  e2e::require_server_exists();
  e2e::become_subreaper();
  e2e::Child server({.argv = {e2e::server_path(), "--once", ":0", e2e::prog_path("sleeper"), "60"}});
  const int port = e2e::listening_port(server);
  const pid_t inferior = faults::started_pid(server);
  {
    e2e::RspClient client(port);
    REQUIRE(client.request("qSupported:multiprocess+").has_value());
    REQUIRE(client.send_raw("$m401000,4"));  // no '#' and checksum: the packet never ends
  }
  const auto status = server.wait(e2e::Clock::now() + 5s);
  INFO("server: " << server.err());
  REQUIRE(status.has_value());
  CHECK(e2e::exit_code(status) == 0);
  std::this_thread::sleep_for(100ms);
  CHECK(faults::process_gone(inferior));
}
