// Fast tracepoints with real GDB: `ftrace` in a program that has the in-process agent
// (calls_agent: calls.c linked with libhindsight-agent.so). A jump to a pad replaces leaf's first
// line (`sink += x`, a 6-byte rip-relative load), and each hit collects in the program's own
// thread, no stop: the frames hold what a trap tracepoint's would. Also the pass count, the
// agent's ring filling many times over, GDB's breakpoint at the same place, several threads,
// and `ftrace` without the agent (a trap tracepoint, as GDB is told by qTMinFTPILen 0).
#include <catch2/catch.hpp>

#include <set>

#include "test/e2e/gdb_session.hpp"
#include "test/e2e/matchers.hpp"

using Catch::Matchers::Contains;
using e2e::ContainsRegex;

namespace {

std::string ftrace_leaf(const std::string& kind, const std::string& actions) {
  return e2e::source_script({kind + " leaf", "actions", actions, "end"});
}

// The text between `from` and the next `to` in text.
std::string between(const std::string& text, const std::string& from, const std::string& to) {
  const auto a = text.find(from);
  const auto b = a == std::string::npos ? a : text.find(to, a + from.size());
  return b == std::string::npos ? "" : text.substr(a, b - a);
}

}  // namespace

TEST_CASE("fast tracepoints: hits collect in the program with no stop; frames as a trap tracepoint's",
          "[e2e][trace][ftrace]") {
  std::map<std::string, std::string> registers;
  for (const std::string kind : {"ftrace", "trace"}) {
    auto out = e2e::run_gdb({.program = "calls_agent",
                             .commands = {"break main", "continue", ftrace_leaf(kind, "collect $regs, x, sink"),
                                          "break done", "tstart", "continue", "tstop", "tstatus", "tfind 50",
                                          "print x", "print sink", "info registers", "print $xmm1.v2_int64",
                                          "print $mxcsr", "tfind none", "info tracepoints", "delete", "continue"},
                             .args = {"loop", "100"},
                             .remote_debug = true});
    INFO(out.transcript());
    // leaf(0) .. leaf(99): the hit of leaf(50) saw sink = 0 + 1 + ... + 49.
    CHECK_THAT(out.gdb, Contains("Collected 100 trace frames."));
    CHECK_THAT(out.gdb, Contains("$1 = 50\n$2 = 1225\n"));
    CHECK_THAT(out.gdb, ContainsRegex(R"(rip\s+0x[0-9a-f]+\s+0x[0-9a-f]+ <leaf\+\d+>)"));
    CHECK_THAT(out.gdb, Contains("tracepoint already hit 100 times"));
    CHECK_THAT(out.gdb, ContainsRegex(R"(\[Inferior 1 \(process \d+\) exited normally\])"));
    registers[kind] = between(out.gdb, "rax ", "No longer looking");
    if (kind == "ftrace") {
      CHECK_THAT(out.gdb, ContainsRegex(R"(\d+\s+fast tracepoint keep y)"));
      CHECK_THAT(out.server_err, ContainsRegex(R"(<- \$qTMinFTPILen\n.*-> \$5\n)"));  // the agent is there
      // No hit stopped the program: main, done and the dynamic linker's breakpoint were the stops.
      CHECK(e2e::occurrences(out.server_err, "-> $T05swbreak") <= 4);
    } else {
      CHECK(e2e::occurrences(out.server_err, "-> $T05swbreak") <= 4);
    }
  }
  // Every register the pad saved (general, flags, segments, vector and control) is as the trap
  // tracepoint's ptrace saw it.
  CHECK_FALSE(registers["ftrace"].empty());
  CHECK(registers["ftrace"] == registers["trace"]);
}

TEST_CASE("fast tracepoints: the pass count ends the run from inside the program", "[e2e][trace][ftrace]") {
  auto out = e2e::run_gdb({.program = "calls_agent",
                           .commands = {"break main", "continue", ftrace_leaf("ftrace", "collect x"), "passcount 30",
                                        "break done", "tstart", "continue", "tstatus", "tfind end", "tfind 29",
                                        "print x", "tfind 30", "tfind none", "delete", "continue"},
                           .args = {"loop", "100"}});
  INFO(out.transcript());
  CHECK_THAT(out.gdb, ContainsRegex(R"(Trace stopped by tracepoint \d+\.)"));
  CHECK_THAT(out.gdb, Contains("Collected 30 trace frames."));
  CHECK_THAT(out.gdb, Contains("$1 = 29\n"));
  CHECK_THAT(out.gdb, ContainsRegex(R"(\[Inferior 1 \(process \d+\) exited normally\])"));
}

TEST_CASE("fast tracepoints: the agent's ring fills many times over; no hit is lost; a bad address is no fault",
          "[e2e][trace][ftrace]") {
  auto out = e2e::run_gdb({.program = "calls_agent",
                           .commands = {"break main", "continue", ftrace_leaf("ftrace", "collect sink, *(int *) 16"),
                                        "break done", "tstart", "continue", "tstop", "tstatus", "tfind 59999",
                                        "print sink", "print *(int *) 16", "tfind none", "delete", "continue"},
                           .args = {"loop", "60000"},
                           .timeout = std::chrono::seconds(60)});
  INFO(out.transcript());
  // Each record takes 56 bytes of the agent's 1 MiB ring (no block for address 16): 60000 of
  // them fill it 3 times. (A
  // local, x, would bring the registers GDB needs to find it: 2 KiB a frame.)
  CHECK_THAT(out.gdb, Contains("Collected 60000 trace frames."));
  CHECK_THAT(out.gdb, Contains("$1 = 1799910001\n"));  // 0 + 1 + ... + 59998
  // An address nothing is mapped at is read without a fault: unavailable, the program unharmed.
  CHECK_THAT(out.gdb, Contains("$2 = <unavailable>\n"));
  CHECK_THAT(out.gdb, ContainsRegex(R"(\[Inferior 1 \(process \d+\) exited normally\])"));
}

TEST_CASE("fast tracepoints: GDB's breakpoint at the same place stops, and the hits still collect",
          "[e2e][trace][ftrace]") {
  auto out = e2e::run_gdb({.program = "calls_agent",
                           .commands = {"break main", "continue", ftrace_leaf("ftrace", "collect x"), "break done",
                                        "tstart", "break calls.c:13", "continue", "print x", "continue", "print x",
                                        "delete 4", "continue", "tstop", "tstatus", "tfind 1", "print x",
                                        "tfind 99", "print x", "tfind none", "delete", "continue"},
                           .args = {"loop", "100"}});
  INFO(out.transcript());
  CHECK_THAT(out.gdb, ContainsRegex(R"(Breakpoint 4, leaf \(x=0\)[^$]*\$1 = 0\n)"));  // GDB's stops
  CHECK_THAT(out.gdb, ContainsRegex(R"(Breakpoint 4, leaf \(x=1\)[^$]*\$2 = 1\n)"));
  CHECK_THAT(out.gdb, Contains("Collected 100 trace frames."));  // every hit, stopped or not
  CHECK_THAT(out.gdb, Contains("$3 = 1\n"));
  CHECK_THAT(out.gdb, Contains("$4 = 99\n"));
  CHECK_THAT(out.gdb, ContainsRegex(R"(\[Inferior 1 \(process \d+\) exited normally\])"));
}

TEST_CASE("fast tracepoints: threads collect on their own stacks", "[e2e][trace][ftrace][threads]") {
  auto out = e2e::run_gdb({.program = "calls_agent",
                           .commands = {"break main", "continue", ftrace_leaf("ftrace", "collect $regs, x"),
                                        "break done", "tstart", "continue", "tstop", "tstatus", "tfind 0",
                                        "print/x $sp", "tfind 1", "print/x $sp", "tfind 2", "print/x $sp", "tfind 3",
                                        "print/x $sp", "tfind 4", "print/x $sp", "tfind 5", "print/x $sp"},
                           .args = {"threads"},
                           .timeout = std::chrono::seconds(40)});
  INFO(out.transcript());
  CHECK_THAT(out.gdb, Contains("Collected 6 trace frames."));
  std::set<unsigned long> stacks;
  for (int i = 1; i <= 6; ++i) {
    auto sp = e2e::find_hex_after(out.gdb, "$" + std::to_string(i) + " = ");
    REQUIRE(sp.has_value());
    stacks.insert(*sp >> 20);
  }
  CHECK(stacks.size() == 2);
}

TEST_CASE("fast tracepoints: without the agent, ftrace collects as a trap tracepoint", "[e2e][trace][ftrace]") {
  auto out = e2e::run_gdb({.program = "calls",
                           .commands = {"break main", "continue", ftrace_leaf("ftrace", "collect x"), "break done",
                                        "tstart", "continue", "tstop", "tstatus", "tfind 10", "print x"},
                           .args = {"loop", "100"},
                           .remote_debug = true});
  INFO(out.transcript());
  CHECK_THAT(out.server_err, ContainsRegex(R"(<- \$qTMinFTPILen\n.*-> \$0\n)"));
  CHECK_THAT(out.gdb, Contains("Collected 100 trace frames."));
  CHECK_THAT(out.gdb, Contains("$1 = 10\n"));
}

TEST_CASE("fast tracepoints: with disconnected tracing a detach leaves the program running and collecting",
          "[e2e][trace][ftrace]") {
  // As gdbserver: the server stays attached, the program runs on (leaf two billion times),
  // its hits collecting into a circular buffer; the next GDB finds the run going on.
  auto out = e2e::run_gdb({.program = "calls_agent",
                           .commands = {"break main", "continue", ftrace_leaf("ftrace", "collect sink"),
                                        "set circular-trace-buffer on", "set disconnected-tracing on", "tstart",
                                        "detach", "shell sleep 0.5", "target remote {target}", "tstop", "tstatus",
                                        "kill"},
                           .args = {"loop", "2000000000"},
                           .server_once = false});
  INFO(out.transcript());
  CHECK_THAT(out.server_err, Contains("Disconnected tracing in effect, leaving hindsight attached to the process"));
  CHECK_THAT(out.gdb, Contains("Trace is already running on the target."));
  // Collected while no GDB was there; the buffer may have wrapped by then, or (a slower server,
  // the sanitized one) not yet.
  CHECK_THAT(out.gdb, ContainsRegex(R"(Buffer contains [1-9]\d* trace frames \(of [1-9]\d* created total\)|)"
                                    R"(Collected [1-9]\d* trace frames\.)"));
}

TEST_CASE("fast tracepoints: a tracepoint added during the run at the same place; both collect",
          "[e2e][trace][ftrace]") {
  // Stopped at leaf's entry (before the fast tracepoint's instruction), GDB adds a trap
  // tracepoint at the same place (installed at once; GDB downloads no actions during a run):
  // the jump comes out and an int3 collects for both, each hit in order.
  auto out = e2e::run_gdb({.program = "calls_agent",
                           .commands = {"break main", "continue", ftrace_leaf("ftrace", "collect x"), "break done",
                                        "tstart", "break *leaf", "continue", "trace leaf", "delete 4", "continue",
                                        "tstop", "tstatus", "info tracepoints", "tfind tracepoint 5",
                                        "tfind tracepoint 2", "print x"},
                           .args = {"loop", "100"}});
  INFO(out.transcript());
  CHECK_THAT(out.gdb, Contains("Collected 200 trace frames."));
  CHECK(e2e::occurrences(out.gdb, "tracepoint already hit 100 times") == 2);
  CHECK_THAT(out.gdb, Contains("Found trace frame 1, tracepoint 5"));
  CHECK_THAT(out.gdb, Contains("Found trace frame 2, tracepoint 2"));
  CHECK_THAT(out.gdb, Contains("$1 = 1\n"));
}

TEST_CASE("fast tracepoints: four threads at once, the ring full again and again; every hit is a frame",
          "[e2e][trace][ftrace][threads]") {
  // 4 x 100000 hits: the agent's ring fills about 20 times, while the other threads keep
  // collecting during each hand-over.
  auto out = e2e::run_gdb({.program = "ftrace_threads",
                           .commands = {"break main", "continue",
                                        e2e::source_script({"ftrace *hit_site", "actions", "collect sink", "end"}),
                                        "set trace-buffer-size 20000000", "break done", "tstart", "continue",
                                        "tstop", "tstatus", "delete", "continue"},
                           .timeout = std::chrono::seconds(60)});
  INFO(out.transcript());
  CHECK_THAT(out.gdb, Contains("Collected 400000 trace frames."));
  CHECK_THAT(out.gdb, ContainsRegex(R"(\[Inferior 1 \(process \d+\) exited normally\])"));
}

TEST_CASE("fast tracepoints: `set agent off` (QAgent:0) collects them by trap, the same frames",
          "[e2e][trace][ftrace]") {
  auto out = e2e::run_gdb({.program = "calls_agent",
                           .commands = {"break main", "continue", "set agent off", ftrace_leaf("ftrace", "collect x"),
                                        "break done", "tstart", "continue", "tstop", "tstatus", "tfind 50",
                                        "print x"},
                           .args = {"loop", "100"},
                           .server_flags = {"--debug=ptrace"}});
  INFO(out.transcript());
  CHECK_THAT(out.gdb, Contains("Collected 100 trace frames."));
  CHECK_THAT(out.gdb, Contains("$1 = 50\n"));
  CHECK_THAT(out.server_err, ContainsRegex(R"(thread \d+: tracepoint hit at 0x[0-9a-f]+)"));
  CHECK_THAT(out.server_err, Contains("no fast tracepoints (`set agent off`)"));
}
