// The dbt recorder's account of a process tree (tracer/btrace/dbt_ring.h: hsdbt.events) and
// Valgrind's log lines that say a process waits at a fatal signal: pure, no process.
#include <catch2/catch.hpp>

#include <cstring>

#include "tracer/btrace/dbt_ring.h"
#include "tracer/valgrind/tree_events.hpp"
#include "tracer/valgrind/valgrind_log.hpp"

namespace {

std::string record(std::uint32_t kind, std::uint32_t pid, std::uint32_t parent, std::int32_t status,
                   std::uint64_t t_ns, std::string_view command = {}) {
  hs_dbt_process_event e{};
  e.kind = kind;
  e.pid = pid;
  e.parent = parent;
  e.status = status;
  e.t_ns = t_ns;
  std::memcpy(e.command, command.data(), std::min(command.size(), sizeof e.command));
  return std::string(reinterpret_cast<const char*>(&e), sizeof e);
}

}  // namespace

TEST_CASE("tree events: records parse, commands split at NULs, a partial or unknown record is skipped", "[dbt_tree]") {
  using std::string_literals::operator""s;
  const std::string bytes = record(HS_DBT_PROCESS_START, 100, 1, 0, 5, "sh\0-c\0./t x\0"s) +
                            record(HS_DBT_PROCESS_FORK, 101, 100, 0, 6) + record(99, 1, 1, 0, 0) +
                            record(HS_DBT_PROCESS_EXEC, 101, 100, 0, 7, "/bin/t\0x\0"s) +
                            record(HS_DBT_PROCESS_KILLED, 101, 0, 0, 8) + record(HS_DBT_PROCESS_EXIT, 100, 0, 3, 9) +
                            std::string(100, 'z');
  const auto events = tracer::parse_tree_events(bytes);
  REQUIRE(events.size() == 5);
  CHECK(events[0].kind == tracer::TreeEvent::Kind::Start);
  CHECK(events[0].command == std::vector<std::string>{"sh", "-c", "./t x"});
  CHECK(events[1].kind == tracer::TreeEvent::Kind::Fork);
  CHECK(events[1].parent == 100);
  CHECK(events[2].command == std::vector<std::string>{"/bin/t", "x"});
  CHECK(events[3].kind == tracer::TreeEvent::Kind::Killed);
  CHECK(events[4].status == 3);
  // A command cut to fit keeps its last NUL: the words before it are whole.
  const std::string full(HS_DBT_COMMAND_BYTES - 1, 'a');
  CHECK(tracer::parse_tree_events(record(HS_DBT_PROCESS_EXEC, 1, 0, 0, 0, full))[0].command ==
        std::vector<std::string>{full});
}

TEST_CASE("tree events in the event log: forks and execs of all, ends of all but the started program", "[dbt_tree]") {
  using std::string_literals::operator""s;
  const auto events = tracer::parse_tree_events(
      record(HS_DBT_PROCESS_START, 100, 1, 0, 5, "sh\0"s) + record(HS_DBT_PROCESS_FORK, 101, 100, 0, 6) +
      record(HS_DBT_PROCESS_EXEC, 101, 100, 0, 7, "/bin/t\0x\0"s) + record(HS_DBT_PROCESS_EXIT, 101, 0, 2, 8) +
      record(HS_DBT_PROCESS_EXIT, 100, 0, 0, 9));
  tracer::EventLog log;
  tracer::log_tree_events(events, 100, log);
  const auto logged = log.events();
  REQUIRE(logged.size() == 3);
  CHECK(logged[0].kind == "fork");
  CHECK(logged[0].pid == 100);
  CHECK(logged[0].number == 101);
  CHECK(logged[1].kind == "exec");
  CHECK(logged[1].detail == "/bin/t");
  CHECK(logged[2].kind == "exit");
  CHECK(logged[2].pid == 101);
  CHECK(logged[2].number == 2);
  // A setuid program exec'd natively: an exec, and why nothing of it is recorded.
  tracer::EventLog native;
  tracer::log_tree_events(tracer::parse_tree_events(record(HS_DBT_PROCESS_NATIVE, 102, 100, 0, 10, "/bin/mount\0"s)), 100,
                          native);
  REQUIRE(native.events().size() == 2);
  CHECK(native.events()[0].kind == "exec");
  CHECK(native.events()[0].detail == "/bin/mount");
  CHECK(native.events()[1].kind == "unrecorded");
  // A child its parent reaped after SIGKILL (it could say nothing itself): killed, SIGKILL.
  tracer::EventLog reaped;
  tracer::log_tree_events(tracer::parse_tree_events(record(HS_DBT_PROCESS_REAPED, 103, 100, 9, 11)), 100, reaped);
  REQUIRE(reaped.events().size() == 1);
  CHECK(reaped.events()[0].kind == "killed");
  CHECK(reaped.events()[0].pid == 103);
  CHECK(reaped.events()[0].number == 9);
}

TEST_CASE("tree events: read as the file grows; a process's command follows fork and exec", "[dbt_tree]") {
  using std::string_literals::operator""s;
  const std::string path = "/tmp/hs-tree-events-" + std::to_string(::getpid());
  std::FILE* f = std::fopen(path.c_str(), "wb");
  REQUIRE(f != nullptr);
  tracer::TreeEvents reader(path);
  CHECK(reader.read_new().empty());
  const std::string first = record(HS_DBT_PROCESS_START, 100, 1, 0, 5, "sh\0-c\0x\0"s) + record(HS_DBT_PROCESS_FORK, 101, 100, 0, 6);
  std::fwrite(first.data(), 1, first.size() - 10, f);  // the second one not whole yet
  std::fflush(f);
  CHECK(reader.read_new().size() == 1);
  std::fwrite(first.data() + first.size() - 10, 1, 10, f);
  std::fflush(f);
  CHECK(reader.read_new().size() == 1);
  CHECK(reader.command_of(101) == std::vector<std::string>{"sh", "-c", "x"});  // forked: the parent's
  const std::string more = record(HS_DBT_PROCESS_EXEC, 101, 100, 0, 7, "/bin/t\0"s);
  std::fwrite(more.data(), 1, more.size(), f);
  std::fflush(f);
  CHECK(reader.read_new().size() == 1);
  CHECK(reader.command_of(101) == std::vector<std::string>{"/bin/t"});
  std::fclose(f);
  std::remove(path.c_str());
}

TEST_CASE("valgrind log: the line that says a process waits at a fatal signal", "[dbt_tree]") {
  CHECK(tracer::waits_at_fatal_signal("==1234== (action on fatal signal) vgdb me ... ") == 1234);
  CHECK_FALSE(tracer::waits_at_fatal_signal("==1234== (action at startup) vgdb me ... "));
  CHECK_FALSE(tracer::waits_at_fatal_signal("== (action on fatal signal) vgdb me"));
  CHECK_FALSE(tracer::waits_at_fatal_signal("==12x4== (action on fatal signal) vgdb me"));
  CHECK_FALSE(tracer::waits_at_fatal_signal("(action on fatal signal) vgdb me ==1=="));
}

TEST_CASE("valgrind log: a FIFO read as it fills, lines split across reads", "[dbt_tree]") {
  const std::string path = "/tmp/hs-vglog-" + std::to_string(::getpid());
  std::remove(path.c_str());
  tracer::ValgrindLog log;
  REQUIRE(log.use_fifo(path));
  std::FILE* w = std::fopen(path.c_str(), "w");
  REQUIRE(w != nullptr);
  std::fputs("==7== hello\n==8== (action on fatal", w);
  std::fflush(w);
  CHECK(log.take_fatal_waits().empty());
  std::fputs(" signal) vgdb me ... \n==9== (action on fatal signal) vgdb me ... \n", w);
  std::fflush(w);
  CHECK(log.take_fatal_waits() == std::vector<tracer::Pid>{8, 9});
  CHECK(log.take_fatal_waits().empty());
  CHECK(log.text().find("==7== hello") == 0);
  std::fclose(w);
  std::remove(path.c_str());
}
