// record btrace with real GDB on the software backend (this VM has no BTS): history, reverse
// execution, replay, buffer overflow, threads, signals. test/progs/calls.c has the call tree
// main -> outer -> (middle -> leaf) x2, outer -> leaf, then main -> done.
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <regex>
#include <string>
#include <vector>

#include "test/e2e/collectors.hpp"
#include "test/e2e/gdb_session.hpp"
#include "test/e2e/matchers.hpp"
#include "test/support/scoped_env.hpp"
#include "test/support/skip.hpp"
#include "test/support/debug_registers_probe.hpp"

using Catch::Matchers::Contains;
using e2e::ContainsRegex;

namespace {

// The N of every "Recorded N instructions ..." line, in order.
std::vector<long> recorded_counts(const std::string& text) {
  std::vector<long> out;
  static const std::regex re(R"(Recorded (\d+) instructions in (\d+) functions \((\d+) gaps\))");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), re); it != std::sregex_iterator(); ++it) {
    out.push_back(std::stol((*it)[1]));
  }
  return out;
}

// Everything GDB would say if the trace did not hold together.
void check_clean(const std::string& gdb) {
  CHECK_THAT(gdb, !Contains("Failed to start recording"));
  CHECK_THAT(gdb, !Contains("Could not enable branch tracing"));
  CHECK_THAT(gdb, !Contains("may be corrupted"));
  CHECK_THAT(gdb, !Contains("may be incomplete"));
  CHECK_THAT(gdb, !Contains("Failed to read branch trace"));
  CHECK_THAT(gdb, !Contains("internal-error"));
  CHECK_THAT(gdb, !ContainsRegex(R"(\(([1-9]\d*) gaps\))"));
}

// The collector a test runs with, named on the server's command line: each test below runs
// once per collector; dbt (the program under the dbt recorder) where it is built.
std::vector<std::string> collector_flags(const std::string& collector) {
  return {"--btrace=" + collector};
}

// GDB 18 refuses `record stop` and `detach` in non-stop while threads run ("You cannot stop
// recording while threads are running"); GDB 13 and 16 let the server take the recorder out
// with them running.
bool gdb_refuses_record_stop_while_running(const std::string& gdb) {
  return gdb.find("You cannot stop recording while threads are running") != std::string::npos;
}

}  // namespace

TEST_CASE("record btrace, continue to a breakpoint: the call history in order", "[e2e][btrace][installed]") {
  const std::string collector = GENERATE("step", "soft", "dbt", "inproc");
  INFO("collector " << collector);
  SKIP_IF_NOT_BUILT(collector);
  auto out = e2e::run_gdb({.program = "calls",
                           .commands = {"break main", "continue", "record btrace",
                                        "set record function-call-history-size 100", "break done",
                                        "continue", "info record", "record function-call-history",
                                        "record function-call-history /c 1,14",
                                        "record function-call-history /l 1,3",
                                        "record function-call-history /i 1,3"},
                           .server_flags = collector_flags(collector)});
  INFO(out.transcript());
  check_clean(out.gdb);
  CHECK_THAT(out.gdb, Contains("Breakpoint 2, done () at"));
  // GDB's default buffer, whichever collector (the dbt recorder's bigger ring is seen through it)
  CHECK_THAT(out.gdb, Contains("Recording format: Branch Trace Store.\nBuffer size: 64kB.\n"));
  CHECK_THAT(out.gdb, ContainsRegex(R"(Recorded \d+ instructions in 14 functions \(0 gaps\) for thread 1)"));
  CHECK_THAT(out.gdb, Contains("1\tmain\n2\touter\n3\tmiddle\n4\tleaf\n5\tmiddle\n6\touter\n7\tmiddle\n"
                               "8\tleaf\n9\tmiddle\n10\touter\n11\tleaf\n12\touter\n13\tmain\n14\tdone\n"));
  CHECK_THAT(out.gdb, Contains("1\tmain\n2\t  outer\n3\t    middle\n4\t      leaf\n5\t    middle\n"));
  CHECK_THAT(out.gdb, ContainsRegex(R"(2\touter\tat .*calls\.c:\d+,\d+\n3\tmiddle\tat .*calls\.c:\d+,\d+\n)"));
  CHECK_THAT(out.gdb, ContainsRegex(R"(1\tmain\tinst 1,\d+\n2\touter\tinst \d+,\d+\n)"));
}

TEST_CASE("record instruction-history lists what ran, the first instruction at the start",
          "[e2e][btrace]") {
  const std::string collector = GENERATE("step", "soft", "dbt", "inproc");
  INFO("collector " << collector);
  SKIP_IF_NOT_BUILT(collector);
  auto out = e2e::run_gdb({.program = "calls",
                           .commands = {"break main", "continue", "print $pc", "record btrace",
                                        "break leaf", "continue", "record instruction-history",
                                        "record instruction-history 1,3"},
                           .server_flags = collector_flags(collector)});
  INFO(out.transcript());
  check_clean(out.gdb);
  const auto start = e2e::find_hex_after(out.gdb, "$1 = (void (*)()) ");
  REQUIRE(start);
  char first[64];
  std::snprintf(first, sizeof first, "1\t   0x%016lx <main+", *start);
  CHECK_THAT(out.gdb, Contains(first));
  CHECK_THAT(out.gdb, ContainsRegex(R"(\t   0x[0-9a-f]+ <middle\+\d+>:\tcall   0x[0-9a-f]+ <leaf>\n)"));
  CHECK_THAT(out.gdb, ContainsRegex(R"(\t   0x[0-9a-f]+ <leaf\+\d+>:\t)"));
}

TEST_CASE("reverse execution and record goto replay the recorded branches", "[e2e][btrace]") {
  const std::string collector = GENERATE("step", "soft", "dbt", "inproc");
  INFO("collector " << collector);
  SKIP_IF_NOT_BUILT(collector);
  auto out = e2e::run_gdb({.program = "calls",
                           .commands = {"break main", "continue", "record btrace", "break done",
                                        "continue", "break leaf", "reverse-continue", "reverse-finish",
                                        "reverse-next", "reverse-step", "record goto begin",
                                        "record goto end", "record goto 12", "info record"},
                           .server_flags = collector_flags(collector)});
  INFO(out.transcript());
  check_clean(out.gdb);
  // reverse-continue from done stops in the last leaf call, which outer made directly.
  CHECK_THAT(out.gdb, ContainsRegex(R"(Breakpoint 3, leaf \(x=<unavailable>\) at .*calls\.c:\d+)"));
  CHECK_THAT(out.gdb, ContainsRegex(R"(in outer \(\) at .*calls\.c:\d+\n\d+\t  leaf\(3\);)"));
  CHECK_THAT(out.gdb, ContainsRegex(R"(middle \(x=<unavailable>\) at .*calls\.c:\d+)"));  // reverse-step
  CHECK_THAT(out.gdb, ContainsRegex(R"(#0  main \(argc=<unavailable>, argv=<unavailable>\) at .*calls\.c)"));
  CHECK_THAT(out.gdb, ContainsRegex(R"(#0  done \(\) at .*calls\.c)"));
  CHECK_THAT(out.gdb, Contains("Replay in progress.  At instruction 12."));
  CHECK_THAT(out.gdb, !Contains("No more reverse-execution history"));
}

TEST_CASE("a second continue appends to the history (delta reads)", "[e2e][btrace]") {
  const std::string collector = GENERATE("step", "soft", "dbt", "inproc");
  INFO("collector " << collector);
  SKIP_IF_NOT_BUILT(collector);
  auto out = e2e::run_gdb({.program = "calls",
                           .commands = {"break main", "continue", "record btrace", "break done",
                                        "continue", "info record", "continue", "info record",
                                        "record function-call-history 27,28"},
                           .remote_debug = true,
                           .server_flags = collector_flags(collector)});
  INFO(out.transcript());
  check_clean(out.gdb);
  const auto counts = recorded_counts(out.gdb);
  REQUIRE(counts.size() == 2);
  CHECK(counts[0] > 0);
  CHECK(counts[1] == 2 * counts[0]);  // main runs outer(); done(); twice, the same instructions
  CHECK_THAT(out.gdb, Contains("27\tmain\n28\tdone\n"));
  CHECK_THAT(out.server_err, Contains("qXfer:btrace:read:delta"));
  CHECK_THAT(out.server_err, !Contains("qXfer:btrace:read:all"));
}

TEST_CASE("a small buffer overflows: only the newest history is kept, quietly", "[e2e][btrace]") {
  const std::string collector = GENERATE("step", "soft", "dbt", "inproc");
  INFO("collector " << collector);
  SKIP_IF_NOT_BUILT(collector);
  auto out = e2e::run_gdb({.program = "calls",
                           .commands = {"break main", "continue", "set record btrace bts buffer-size 240",
                                        "record btrace", "break done", "continue", "info record",
                                        "record function-call-history"},
                           .args = {"loop", "2000"},
                           .server_flags = collector_flags(collector)});
  INFO(out.transcript());
  check_clean(out.gdb);
  CHECK_THAT(out.gdb, Contains("Buffer size: 4kB."));  // 240 rounded up as the kernel rounds BTS
  CHECK_THAT(out.gdb, !ContainsRegex("warning: (?!File transfers)"));  // GDB says nothing wrong
  CHECK_THAT(out.gdb, !Contains("Error while trying to read delta trace"));
  const auto counts = recorded_counts(out.gdb);
  REQUIRE(counts.size() == 1);
  CHECK(counts[0] > 0);
  CHECK(counts[0] < 1500);  // 170 samples' worth, not 2000 loop iterations (some 16000)
  CHECK_THAT(out.gdb, ContainsRegex(R"(\tleaf\n\d+\tmain\n\d+\tdone\n)"));
}

TEST_CASE("two threads traced: each has its own history", "[e2e][btrace][threads]") {
  const std::string collector = GENERATE("step", "soft", "dbt", "inproc");
  INFO("collector " << collector);
  SKIP_IF_NOT_BUILT(collector);
  auto out = e2e::run_gdb({.program = "calls",
                           .commands = {"break ready", "continue", "record btrace", "break leaf if x == 3",
                                        "continue", "info record", "record function-call-history /c",
                                        "continue", "info record", "record function-call-history /c",
                                        "continue"},
                           .args = {"threads"},
                           .server_flags = collector_flags(collector)});
  INFO(out.transcript());
  check_clean(out.gdb);
  CHECK_THAT(out.gdb, ContainsRegex(R"(Recorded \d+ instructions in \d+ functions \(0 gaps\) for thread 2 )"));
  CHECK_THAT(out.gdb, ContainsRegex(R"(Recorded \d+ instructions in \d+ functions \(0 gaps\) for thread 3 )"));
  // Each worker's own history: outer's whole call tree, once per thread.
  const std::regex tree(R"(\t\s*outer\n\d+\t\s+middle\n\d+\t\s+leaf\n\d+\t\s+middle\n\d+\t\s+outer\n)"
                        R"(\d+\t\s+middle\n\d+\t\s+leaf\n\d+\t\s+middle\n\d+\t\s+outer\n\d+\t\s+leaf\n)");
  CHECK(std::distance(std::sregex_iterator(out.gdb.begin(), out.gdb.end(), tree), std::sregex_iterator()) == 2);
  CHECK_THAT(out.gdb, Contains("exited normally"));
}

TEST_CASE("tracing across a signal handler keeps the history whole", "[e2e][btrace][signals]") {
  const std::string collector = GENERATE("step", "soft", "dbt", "inproc");
  INFO("collector " << collector);
  SKIP_IF_NOT_BUILT(collector);
  auto out = e2e::run_gdb({.program = "calls",
                           .commands = {"break main", "continue", "record btrace", "break done",
                                        "continue", "continue", "info record",
                                        "record function-call-history /c"},
                           .args = {"signal"},
                           .server_flags = collector_flags(collector)});
  INFO(out.transcript());
  check_clean(out.gdb);
  CHECK_THAT(out.gdb, Contains("Program received signal SIGUSR1"));
  CHECK_THAT(out.gdb, Contains("Breakpoint 2, done () at"));
  CHECK_THAT(out.gdb, ContainsRegex(R"(\t\s*handler\n\d+\t\s+leaf\n\d+\t\s+handler\n\d+\t\s+__restore_rt\n)"));
}

TEST_CASE(
    "a program waiting for its children as a shell does (sigsuspend, SIGCHLD) wakes at each child's end",
    "[e2e][btrace][signals]") {
  const std::string collector = GENERATE("soft", "dbt", "inproc");
  INFO("collector " << collector);
  SKIP_IF_NOT_BUILT(collector);
  auto out = e2e::run_gdb({.program = "waiter",
                           .commands = {"break main", "continue", "record btrace", "break on_child",
                                        "continue", "record function-call-history", "delete", "continue"},
                           .args = {"3"},
                           .server_flags = collector_flags(collector)});
  INFO(out.transcript());
  check_clean(out.gdb);
  CHECK_THAT(out.server_out, Contains("round 1: the child exited with 1\nround 2: the child exited with 2\n"
                                      "round 3: the child was killed by signal 9\nwaited for every child\n"));
  CHECK_THAT(out.gdb, Contains("Breakpoint 2, on_child ("));
  // The signal came in sigsuspend, and the handler ran recorded.
  CHECK_THAT(out.gdb, ContainsRegex(R"(\n\d+\t\w*sigsuspend\n\d+\ton_child\n)"));
  CHECK_THAT(out.gdb, Contains("exited normally"));
}

TEST_CASE("record stop ends tracing; the program runs on untraced", "[e2e][btrace]") {
  const std::string collector = GENERATE("step", "soft", "dbt", "inproc");
  INFO("collector " << collector);
  SKIP_IF_NOT_BUILT(collector);
  auto out = e2e::run_gdb({.program = "calls",
                           .commands = {"break main", "continue", "record btrace", "break done",
                                        "continue", "record stop", "info record", "delete", "continue"},
                           .server_flags = collector_flags(collector)});
  INFO(out.transcript());
  check_clean(out.gdb);
  CHECK_THAT(out.gdb, Contains("Process record is stopped and all execution logs are deleted."));
  CHECK_THAT(out.gdb, Contains("No recording is currently active."));
  CHECK_THAT(out.gdb, Contains("exited normally"));
}

TEST_CASE("a watchpoint stops a traced thread as it stops an untraced one", "[e2e][btrace][watch]") {
  REQUIRE_DEBUG_REGISTERS();
  const std::string collector = GENERATE("step", "soft", "inproc");
  INFO("collector " << collector);
  auto out = e2e::run_gdb({.program = "calls",
                           .commands = {"break outer", "continue", "record btrace", "watch sink", "continue",
                                        "continue", "bt 2", "info record", "delete", "record stop", "continue"},
                           .server_flags = collector_flags(collector)});
  INFO(out.transcript());
  check_clean(out.gdb);
  // leaf(1) adds 1 to sink: the first write is in leaf, called from middle.
  CHECK_THAT(out.gdb, ContainsRegex(R"(Hardware watchpoint 2: sink\s+Old value = 0\s+New value = 1)"));
  CHECK_THAT(out.gdb, ContainsRegex(R"(Old value = 1\s+New value = 2)"));  // middle's sink += 1
  CHECK_THAT(out.gdb, ContainsRegex(R"(#1  0x[0-9a-f]+ in outer \(\))"));
  auto counts = recorded_counts(out.gdb);
  REQUIRE(counts.size() == 1);
  CHECK(counts[0] > 5);
  CHECK_THAT(out.gdb, Contains("exited normally"));
}

TEST_CASE("monitor btrace shows the backend and what each thread's ring holds", "[e2e][btrace]") {
  const std::string collector = GENERATE("step", "soft", "inproc");
  INFO("collector " << collector);
  auto out = e2e::run_gdb({.program = "calls",
                           .commands = {"break outer", "continue", "monitor btrace", "record btrace",
                                        "break done", "continue",
                                        "monitor btrace", "record stop", "monitor btrace", "delete", "continue"},
                           .server_flags = collector_flags(collector)});
  INFO(out.transcript());
  check_clean(out.gdb);
  CHECK_THAT(out.gdb, Contains("branch tracing: backend " + collector + ", buffer 65536 bytes per thread (at most 67108864)\n"));
  // While recording: the backend, the default ring of 65536 / 24 branches, and how the
  // branches were seen: SoftEmulate performs them, SoftStep steps every instruction.
  CHECK_THAT(out.gdb, ContainsRegex("thread \\d+: " + collector +
                                    R"(, (\d+) of 2730 branches kept, \1 recorded, 0 lost, 0 gaps; (\d+) performed, (\d+) stepped)"));
  std::smatch m;
  REQUIRE(std::regex_search(out.gdb, m, std::regex(R"(\d+ recorded, 0 lost, 0 gaps; (\d+) performed, (\d+) stepped)")));
  if (collector == "soft") {
    CHECK(std::stol(m[1]) > std::stol(m[2]));  // branches performed, only GDB's steps stepped
  } else {
    CHECK(std::stol(m[1]) == 0);
  }
  CHECK_THAT(out.gdb, ContainsRegex(R"(thread \d+: not traced)"));  // before and after
  CHECK_THAT(out.gdb, Contains("exited normally"));
}

TEST_CASE("auto takes BTS where the kernel gives it, else the in-process recorder, and says why", "[e2e][btrace]") {
  auto out = e2e::run_gdb({.program = "calls",
                           .commands = {"break outer", "continue", "record btrace", "break done", "continue",
                                        "monitor btrace", "info record"}});
  INFO(out.transcript());
  check_clean(out.gdb);
  CHECK_THAT(out.gdb, Contains("branch tracing: backend auto, buffer 65536 bytes per thread (at most 67108864)\n"));
  CHECK_THAT(out.gdb, ContainsRegex(R"(thread \d+: (bts|inproc), )"));
  CHECK_THAT(out.gdb, ContainsRegex(R"(Recorded \d+ instructions in \d+ functions \(0 gaps\) for thread 1)"));
  // Where it passed BTS over, it says so and why (on this VM: no BTS), in the kernel's words.
  if (out.gdb.find(": inproc, ") != std::string::npos) {
    CHECK_THAT(out.gdb, ContainsRegex(R"(auto passed over bts: (Intel BTS is not available on this CPU|Intel BTS via perf_event_open failed: )[^\n]+--btrace=inproc\))"));
  } else {
    CHECK_THAT(out.gdb, !Contains("auto passed over"));
  }
}

TEST_CASE("auto on a static program: the in-process recorder comes in too, mapped by the server with no loader of "
          "the program's",
          "[e2e][btrace]") {
  auto out = e2e::run_gdb({.program = "tls_static",
                           .commands = {"break main", "continue", "record btrace", "next", "next",
                                        "monitor btrace", "info record"}});
  INFO(out.transcript());
  check_clean(out.gdb);
  if (out.gdb.find(": bts, ") != std::string::npos) {
    HS_SKIP("this machine has Intel BTS: auto recorded with it");
  }
  CHECK_THAT(out.gdb, ContainsRegex(R"(thread \d+: inproc, )"));
  CHECK_THAT(out.gdb, !Contains("auto passed over inproc"));
  CHECK_THAT(out.gdb, ContainsRegex(R"(Recorded \d+ instructions in \d+ functions \(0 gaps\) for thread 1)"));
}

TEST_CASE("maint info btrace and maint btrace packet-history show the blocks GDB fetched, under each collector",
          "[e2e][btrace]") {
  // (GDB 13 reads nothing from the server for `maint info btrace`: asked before GDB fetched any
  // trace, as right after `record btrace`, it dereferences its own empty data and crashes, with
  // any server, gdbserver with BTS hardware too. After `info record` it has the blocks.)
  const std::string collector = GENERATE("step", "soft", "inproc");
  INFO("collector " << collector);
  auto out = e2e::run_gdb({.program = "calls",
                           .commands = {"break outer", "continue", "record btrace", "break done", "continue",
                                        "info record", "maint info btrace", "maint btrace packet-history 0,2"},
                           .server_flags = collector_flags(collector)});
  INFO(out.transcript());
  check_clean(out.gdb);
  CHECK_THAT(out.gdb, Contains("Format: Branch Trace Store.\nNumber of packets: "));
  CHECK_THAT(out.gdb, ContainsRegex(R"(\n0\tbegin: 0x[0-9a-f]+, end: 0x[0-9a-f]+\n1\tbegin: )"));
  CHECK_THAT(out.gdb, !Contains("Fatal signal"));
}

TEST_CASE("--btrace=bts where the kernel has no BTS: GDB is told why and what to do", "[e2e][btrace]") {
  auto out = e2e::run_gdb({.program = "calls",
                           .commands = {"break outer", "continue", "record btrace", "monitor btrace"},
                           .server_flags = {"--btrace=bts"}});
  INFO(out.transcript());
  if (out.gdb.find("Could not enable branch tracing") == std::string::npos) {
    HS_SKIP("this machine has Intel BTS: record btrace with --btrace=bts worked");
  }
  CHECK_THAT(out.gdb, ContainsRegex(R"(Could not enable branch tracing for Thread [^:]+: (Intel BTS is not available on this CPU|Intel BTS via perf_event_open failed: )[^\n]*use the in-process recorder \(--btrace=inproc\))"));
  CHECK_THAT(out.gdb, ContainsRegex(R"(\n  Intel BTS: [^\n]+--btrace=inproc\))"));
}

TEST_CASE("--btrace-scope=exe: a call into libc is a call and a return; libc and its callbacks unrecorded",
          "[e2e][btrace][scope]") {
  // (SoftEmulate: the scope is the software tracer's.)
  const std::string scope = GENERATE("all", "exe");
  INFO("scope " << scope);
  auto out = e2e::run_gdb({.program = "scoped",
                           .commands = {"break begin", "continue", "record btrace", "break done", "continue",
                                        "set record function-call-history-size 1000",
                                        "record function-call-history", "monitor btrace", "info record", "continue"},
                           .server_flags = {"--btrace=soft", "--btrace-scope=" + scope}});
  INFO(out.transcript());
  check_clean(out.gdb);
  CHECK_THAT(out.server_out, Contains("scoped: 0 9 330"));  // qsort still sorted through cmp
  CHECK_THAT(out.gdb, ContainsRegex(R"(\tmain\n\d+\ttally\n\d+\tmain\n\d+\tdone\n)"));
  CHECK_THAT(out.gdb, ContainsRegex(R"(\tqsort@plt\n)"));
  if (scope == "exe") {
    CHECK_THAT(out.gdb, Contains(", scope exe\n"));
    CHECK_THAT(out.gdb, !Contains("\tcmp\n"));             // called back from libc: not recorded
    CHECK_THAT(out.gdb, !Contains("qsort_r"));             // libc's own functions: not recorded
    CHECK_THAT(out.gdb, ContainsRegex(R"(\t__strlen\w*\n\d+\tmain\n)"));  // called, returned
  } else {
    CHECK_THAT(out.gdb, Contains("\tcmp\n"));
    CHECK_THAT(out.gdb, Contains("qsort_r"));
  }
}

TEST_CASE("--btrace-scope=libc.so: only libc's branches; the way back into it is a gap", "[e2e][btrace][scope]") {
  auto out = e2e::run_gdb({.program = "scoped",
                           .commands = {"break begin", "continue", "record btrace", "break done", "continue",
                                        "set record function-call-history-size 1000",
                                        "record function-call-history", "monitor btrace", "continue"},
                           .server_flags = {"--btrace-scope=libc.so"}});
  INFO(out.transcript());
  CHECK_THAT(out.server_out, Contains("scoped: 0 9 330"));
  CHECK_THAT(out.gdb, Contains(", scope libc.so\n"));
  CHECK_THAT(out.gdb, Contains("qsort_r"));
  CHECK_THAT(out.gdb, !Contains("\ttally\n"));
  CHECK_THAT(out.gdb, !Contains("\tbegin\n"));
  CHECK_THAT(out.gdb, ContainsRegex(R"(thread \d+: soft, .*, [1-9]\d* gaps;)"));  // each way back from main
}

TEST_CASE("the program starts with the signal state of a shell, not the server's", "[e2e][btrace][signals]") {
  const std::string collector = GENERATE("soft", "dbt");
  INFO("collector " << collector);
  SKIP_IF_NOT_BUILT(collector);
  auto out = e2e::run_gdb({.program = "sigstate", .commands = {"continue"}, .server_flags = collector_flags(collector)});
  INFO(out.transcript());
  CHECK_THAT(out.server_out, Contains("blocked signals: 0, SIGPIPE default\n"));
  CHECK_THAT(out.gdb, Contains("exited normally"));
}

TEST_CASE("--btrace=dbt where the recorder cannot start: the software tracer records, and why",
          "[e2e][btrace][dbt]") {
  // The server inherits it; whatever the suite was given (test.sh's sanitized run names the
  // regular build's recorder) comes back afterwards.
  const test_support::ScopedEnv lib("HINDSIGHT_DBT_LIB", "/nonexistent-hindsight-dbt-lib");
  auto out = e2e::run_gdb({.program = "calls",
                           .commands = {"break outer", "continue", "record btrace", "break done", "continue",
                                        "info record", "monitor btrace"},
                           .server_flags = {"--btrace=dbt"}});
  INFO(out.transcript());
  check_clean(out.gdb);
  CHECK_THAT(out.server_err, Contains("hindsight: the dbt recorder cannot run "));
  CHECK_THAT(out.server_err, Contains("recording with the software tracer instead (--btrace=soft)"));
  CHECK_THAT(out.gdb, ContainsRegex(R"(Recorded \d+ instructions in 13 functions \(0 gaps\))"));
  CHECK_THAT(out.gdb, Contains("branch tracing: backend soft"));
}

namespace {

bool cpu_has_avx512() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  const std::string flags((std::istreambuf_iterator<char>(cpuinfo)), std::istreambuf_iterator<char>());
  return flags.find(" avx512f") != std::string::npos;
}

}  // namespace

TEST_CASE("--btrace=dbt and a program built with AVX-512: recorded in software from the start, and why",
          "[e2e][btrace][dbt]") {
  if (!cpu_has_avx512()) {
    HS_SKIP("this CPU has no AVX-512: the test program would die of SIGILL natively too");
  }
  auto out = e2e::run_gdb({.program = "avx512",
                           .commands = {"record btrace", "break 8", "continue", "info record", "monitor btrace",
                                        "delete", "record stop", "continue"},
                           .server_flags = {"--btrace=dbt"}});
  INFO(out.transcript());
  check_clean(out.gdb);
  CHECK_THAT(out.server_err, Contains("the dbt recorder cannot run "));
  CHECK_THAT(out.server_err, Contains("it uses AVX-512 instructions (in .text), which Valgrind 3.19 cannot run"));
  CHECK_THAT(out.server_err, Contains("recording with the software tracer instead (--btrace=soft)"));
  CHECK_THAT(out.gdb, ContainsRegex(R"(Recorded [1-9]\d* instructions in \d+ functions \(0 gaps\))"));
  CHECK_THAT(out.gdb, Contains("branch tracing: backend soft"));
  CHECK_THAT(out.gdb, Contains("exited normally"));
}

TEST_CASE("under the dbt recorder: the history up to an instruction Valgrind cannot run, and what to do",
          "[e2e][btrace][dbt]") {
  if (!HS_DBT_BUILT) {
    HS_SKIP("the dbt recorder is not built (valgrind's headers and core archives not found)");
  }
  if (!cpu_has_avx512()) {
    HS_SKIP("this CPU has no AVX-512: the test program would die of SIGILL natively too");
  }
  // The instruction is written at run time: no look at the executable finds it.
  auto out = e2e::run_gdb({.program = "avx512_jit",
                           .commands = {"record btrace", "continue", "info record", "monitor btrace"},
                           .server_flags = {"--btrace=dbt"}});
  INFO(out.transcript());
  check_clean(out.gdb);
  CHECK_THAT(out.gdb, Contains("Program received signal SIGILL"));
  CHECK_THAT(out.server_err, Contains("cannot run (unhandled instruction bytes: 0x62 "));
  CHECK_THAT(out.server_err, Contains("record this program with --btrace=soft instead"));
  // From the first instruction (the recorder's ring exists before it) to the fault.
  CHECK_THAT(out.gdb, ContainsRegex(R"(Recorded [1-9]\d{4,} instructions in \d+ functions \(0 gaps\))"));
  CHECK_THAT(out.gdb, ContainsRegex(R"(thread \d+: dbt, )"));
}

TEST_CASE("a crash under the dbt recorder: registers, the stack, siginfo and the history to the fault",
          "[e2e][btrace][dbt]") {
  if (!HS_DBT_BUILT) {
    HS_SKIP("the dbt recorder is not built (valgrind's headers and core archives not found)");
  }
  auto out = e2e::run_gdb({.program = "crash",
                           .commands = {"break main", "continue", "record btrace", "continue", "bt",
                                        "print $_siginfo.si_signo", "print $_siginfo._sifields._sigfault.si_addr",
                                        "record function-call-history /c", "info record"},
                           .server_flags = {"--btrace=dbt"}});
  INFO(out.transcript());
  check_clean(out.gdb);
  CHECK_THAT(out.gdb, Contains("Program received signal SIGSEGV"));
  CHECK_THAT(out.gdb, ContainsRegex(R"(#0  0x[0-9a-f]+ in store \(r=0x0, v=3\) at .*crash\.c:\d+\n)"));
  CHECK_THAT(out.gdb, ContainsRegex(R"(#1  0x[0-9a-f]+ in update \(r=0x[0-9a-f]+, depth=3\) at .*crash\.c:\d+\n)"));
  CHECK_THAT(out.gdb, Contains("$1 = 11\n$2 = (void *) 0x10\n"));
  CHECK_THAT(out.gdb, ContainsRegex(R"(\d+\tmain\n\d+\t  update\n\d+\t    store\n)"));
}

TEST_CASE("a long software recording says how it goes in GDB's console and on the server's stderr, and "
          "what is faster", "[e2e][btrace]") {
  // sleeper runs for 9 s, a few branches every 10 ms: GDB waits meanwhile (the first line comes
  // some 5 s after the continue).
  auto out = e2e::run_gdb({.program = "sleeper",
                           .commands = {"break main", "continue", "record btrace", "continue"},
                           .args = {"9"},
                           .timeout = std::chrono::seconds(60),
                           .server_flags = collector_flags("soft")});
  INFO(out.transcript());
  const std::string line = R"(hindsight: soft has recorded \d+ branches in \d+ s \(\d+ a second\))";
  CHECK_THAT(out.server_err, ContainsRegex(line));
  CHECK_THAT(out.server_err, Contains("for long recordings use the in-process recorder (--btrace=inproc)"));
  // In GDB's console while the program runs (O packets), before its end.
  CHECK_THAT(out.gdb, ContainsRegex(line + R"([\s\S]*use the in-process recorder \(--btrace=inproc\)[\s\S]*(exited normally|exited with code))"));
}

TEST_CASE("inproc: a recorded program that execs is recorded again once the new program has its libc",
          "[e2e][btrace][exec]") {
  auto out = e2e::run_gdb({.program = "execer",
                           .commands = {"break main", "continue", "record btrace", "continue", "break sum_squares",
                                        "continue", "info record", "record function-call-history", "record stop",
                                        "continue"},
                           .args = {e2e::prog_path("simple")},
                           .server_flags = collector_flags("inproc")});
  INFO(out.transcript());
  CHECK_THAT(out.gdb, Contains("Breakpoint 2, sum_squares (n=4)"));
  // The exec and ld.so's start before libc are a gap (the recorder comes back once libc is in, at
  // the program's entry at the latest); the new program's branches are recorded.
  CHECK_THAT(out.gdb, ContainsRegex(R"(Recorded \d+ instructions in \d+ functions \(\d+ gaps\) for thread 1)"));
  CHECK_THAT(out.gdb, ContainsRegex(R"(\n\d+\tmain\n\d+\tsum_squares\n)"));
  CHECK_THAT(out.gdb, ContainsRegex(R"(\[Inferior 1 \(process \d+\) exited with code 07\])"));
}

TEST_CASE("record btrace at a program's first instruction: auto records with inproc from the program's entry, "
          "the dynamic linker's start a gap",
          "[e2e][btrace]") {
  auto out = e2e::run_gdb({.program = "calls",
                           .commands = {"record btrace", "break main", "continue", "monitor btrace", "info record",
                                        "record function-call-history 1,100", "record stop", "continue"}});
  INFO(out.transcript());
  if (out.gdb.find(": bts, ") != std::string::npos) {
    HS_SKIP("this machine has Intel BTS: auto recorded with it");
  }
  CHECK_THAT(out.gdb, ContainsRegex(R"(thread \d+: inproc, )"));
  // (GDB's steps over its breakpoint at the dynamic linker's library events are recorded, as
  // under step; the native runs between them are gaps.)
  CHECK_THAT(out.gdb, ContainsRegex(R"(Recorded \d+ instructions in \d+ functions \(\d gaps\) for thread 1)"));
  // From the program's entry through libc's start to main, with nothing lost.
  CHECK_THAT(out.gdb, ContainsRegex(R"(\n\d+\t_start\n\d+\t__libc_start_main[^\n]*\n[\s\S]*\n\d+\tmain\n)"));
  if (const auto start = out.gdb.find("\t_start\n"); start != std::string::npos) {
    const auto after_start = out.gdb.substr(start);
    CHECK_THAT(after_start.substr(0, after_start.find("\tmain\n")), !Contains("decode error"));
  }
  CHECK_THAT(out.gdb, Contains("exited normally"));
}

TEST_CASE("inproc: a fork child GDB lets go keeps nothing of the recorder (its copy taken out), and runs on",
          "[e2e][btrace][fork]") {
  // The child spins for ever: its maps are read while GDB holds the parent at wait_child, then
  // it is killed.
  const std::string maps = "shell echo recorder-mappings $(grep -c -e libhindsight-recorder -e hindsight-ring /proc/%d/maps)";
  auto out = e2e::run_gdb({.program = "forks",
                           .commands = {"break main", "continue", "record btrace", "break wait_child", "continue",
                                        "eval \"" + maps + "\", child", "eval \"shell echo spinning $(grep -c '^State:.R' /proc/%d/status)\", child",
                                        "eval \"shell kill -9 %d\", child", "record stop", "continue"},
                           .args = {"spin"},
                           .server_flags = collector_flags("inproc")});
  INFO(out.transcript());
  CHECK_THAT(out.gdb, Contains("Breakpoint 2, wait_child ("));
  CHECK_THAT(out.gdb, Contains("recorder-mappings 0\n"));
  CHECK_THAT(out.gdb, Contains("spinning 1\n"));  // running its own code, not stopped nor stuck in ours
  CHECK_THAT(out.server_out, Contains(" status 109\n"));  // killed (100 + SIGKILL), after it spun
  CHECK_THAT(out.gdb, Contains("exited normally"));
}

TEST_CASE("inproc: a recorded program that forks or vforks: GDB sees the parent in the program's code, the child "
          "runs natively",
          "[e2e][btrace][fork]") {
  const std::string how = GENERATE("fork", "vfork");
  auto out = e2e::run_gdb({.program = "forks",
                           .commands = {"break main", "continue", "record btrace", "catch " + how,
                                        "break parent_done", "continue", "bt", "continue", "info record",
                                        "record function-call-history", "record stop", "continue"},
                           .args = {how, e2e::prog_path("simple")},
                           .server_flags = collector_flags("inproc")});
  INFO(out.transcript());
  CHECK_THAT(out.gdb, ContainsRegex(R"(Catchpoint \d+ \()" + how + R"(ed process \d+\))"));
  // At the event the parent stands in libc's fork, called from main: not at a cache address.
  CHECK_THAT(out.gdb, ContainsRegex(R"(\n#\d+ +0x[0-9a-f]+ in main \()"));
  CHECK_THAT(out.gdb, !Contains(" in ?? ()"));
  CHECK_THAT(out.gdb, Contains("parent_done (status=7)"));  // the child ran to its end (simple exits 7)
  // The parent's history: no gap for the fork (the child's branches are not in it).
  CHECK_THAT(out.gdb, ContainsRegex(R"(Recorded \d+ instructions in \d+ functions \(0 gaps\) for thread 1)"));
  CHECK_THAT(out.gdb, ContainsRegex(R"(\n\d+\tmain\n)"));
  CHECK_THAT(out.gdb, Contains("exited normally"));
}

TEST_CASE("inproc, non-stop: a breakpoint GDB inserts while threads run in the recorder's cache is hit, threads born "
          "while recording are recorded, and record stop takes the recorder out while they run",
          "[e2e][btrace][non-stop]") {
  const std::string recorder_maps =
      "python print('recorder-mappings %d' % sum(1 for l in open('/proc/%d/maps' % gdb.selected_inferior().pid) "
      "if 'libhindsight-recorder' in l or 'hindsight-ring' in l))";
  auto out = e2e::run_gdb({.program = "workers",
                           .commands = {"break main", "continue", "record btrace", "break all_running", "continue",
                                        "shell sleep 0.3",  // the four workers run checksum in the cache meanwhile
                                        "break checksum", "continue", "thread apply all -s info record", "delete", "record stop",
                                        recorder_maps, "continue -a"},
                           .args = {"3"},
                           .init_commands = {"set non-stop on"},
                           .server_flags = collector_flags("inproc")});
  INFO(out.transcript());
  // Translations made before the int3 was there are not run again: a worker stops on it.
  CHECK_THAT(out.gdb, ContainsRegex(R"(Thread [2-5] "workers" hit Breakpoint 3, checksum \(seed=)"));
  // GDB reads a new thread's registers as it runs to start its history there: no error ends it.
  CHECK_THAT(out.gdb, !Contains("Could not read registers"));
  CHECK_THAT(out.gdb, ContainsRegex(R"(Recorded \d+ instructions in \d+ functions \(0 gaps\) for thread [2-5] )"));
  if (!gdb_refuses_record_stop_while_running(out.gdb)) {
    CHECK_THAT(out.gdb, Contains("recorder-mappings 0\n"));
  }
  CHECK_THAT(out.server_out, Contains("workers ok"));  // every round computed right, in and out of the cache
  CHECK_THAT(out.gdb, Contains("exited normally"));
}

TEST_CASE("inproc, non-stop, --attach: record btrace records the threads that run on from then, a breakpoint stops "
          "them, and detach leaves the program as it was",
          "[e2e][btrace][non-stop][attach]") {
  e2e::Child workers({.argv = {e2e::prog_path("workers"), "4"}});
  REQUIRE(workers.wait_for_text("threads=4", e2e::Clock::now() + std::chrono::seconds(5), true));
  const pid_t pid = workers.pid();
  // GDB stops the leader at the attach; the four workers run on, natively, until they record.
  auto out = e2e::run_gdb({.commands = {"record btrace", "break checksum", "continue",
                                        "thread apply all -s info record", "delete", "record stop", "detach"},
                           .transport = e2e::Transport::attach,
                           .attach_pid = pid,
                           .init_commands = {"set non-stop on"},
                           .server_flags = collector_flags("inproc")});
  INFO(out.transcript());
  CHECK_THAT(out.gdb, ContainsRegex(R"(Thread [2-5] "workers" hit Breakpoint 1, checksum \(seed=)"));
  // A worker that ran when recording began has recorded since: a history with no gap.
  CHECK_THAT(out.gdb, ContainsRegex(R"(Recorded [1-9]\d* instructions in \d+ functions \(0 gaps\) for thread [2-5] )"));
  if (!gdb_refuses_record_stop_while_running(out.gdb)) {
    CHECK_THAT(out.gdb, Contains("[Inferior 1 (process " + std::to_string(pid) + ") detached]"));
  }
  // (Else GDB leaves with the program recording and its threads running: the server takes the
  // recorder out as it lets the program go.)
  const auto status = workers.wait(e2e::Clock::now() + std::chrono::seconds(20));
  INFO("workers: " << e2e::describe_status(status) << "\n" << workers.out());
  CHECK(e2e::exit_code(status) == 0);
  CHECK_THAT(workers.out(), Contains("workers ok"));
}
