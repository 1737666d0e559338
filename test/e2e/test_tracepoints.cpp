// Tracepoints with real GDB: `trace`, `actions`, `tstart`, the program running on while hits
// collect, `tstop`, `tstatus`, then `tfind` through the frames with registers, locals and
// memory as they were. Also the pass count, a circular buffer that wraps, while-stepping,
// several threads, and disconnected tracing across GDB's reconnect.
#include <catch2/catch.hpp>

#include <set>

#include "test/e2e/gdb_session.hpp"
#include "test/e2e/matchers.hpp"

using Catch::Matchers::Contains;
using e2e::ContainsRegex;

namespace {

std::string source(const std::vector<std::string>& lines) { return e2e::source_script(lines); }

// simple.c's square(x), called for x = 1..4 with global_counter 0..3: a tracepoint there.
std::string trace_square(const std::vector<std::string>& actions) {
  std::vector<std::string> lines = {"trace square", "actions"};
  lines.insert(lines.end(), actions.begin(), actions.end());
  lines.push_back("end");
  return source(lines);
}

// What GDB says when no frame matches (GDB 13; later GDBs).
constexpr const char* kNoFrame = "No trace frame found|Target failed to find requested trace frame";

}  // namespace

TEST_CASE("tracepoints: hits collect while the program runs on; tfind shows registers, locals and globals",
          "[e2e][trace]") {
  auto out = e2e::run_gdb({.program = "simple",
                           .commands = {"break main", "continue",
                                        trace_square({"collect $regs, x, global_counter"}), "break fflush",
                                        "tstart", "continue", "tstop", "tstatus", "tfind start", "print x",
                                        "print global_counter", "print result", "info registers rip", "tfind 3",
                                        "print x", "print global_counter", "tfind", "tfind none", "print x",
                                        "delete", "continue"},
                           .remote_debug = true});
  INFO(out.transcript());
  CHECK_THAT(out.gdb, Contains("Collected 4 trace frames."));
  CHECK_THAT(out.gdb, ContainsRegex(R"(Found trace frame 0, tracepoint \d+)"));
  CHECK_THAT(out.gdb, Contains("$1 = 1\n$2 = 0\n$3 = <unavailable>"));
  CHECK_THAT(out.gdb, ContainsRegex(R"(rip\s+0x[0-9a-f]+\s+0x[0-9a-f]+ <square\+\d+>)"));
  CHECK_THAT(out.gdb, ContainsRegex(R"(Found trace frame 3, tracepoint \d+)"));
  CHECK_THAT(out.gdb, Contains("$4 = 4\n$5 = 3"));
  CHECK_THAT(out.gdb, ContainsRegex(kNoFrame));
  CHECK_THAT(out.gdb, Contains("No longer looking at any trace frame"));
  // The four hits went without a stop GDB heard of: main, fflush and the dynamic linker's
  // breakpoint (twice) were the stops.
  CHECK(e2e::occurrences(out.server_err, "-> $T05swbreak") == 4);
  CHECK_THAT(out.server_err, ContainsRegex(R"(<- \$QTFrame:0\b)"));
  // Collecting changed nothing the program computed.
  CHECK_THAT(out.gdb, ContainsRegex(R"(\[Inferior 1 \(process \d+\) exited with code 07\])"));
}

TEST_CASE("tracepoints: the pass count stops the run; later hits collect nothing", "[e2e][trace]") {
  auto out = e2e::run_gdb({.program = "simple",
                           .commands = {"break main", "continue", trace_square({"collect x"}), "passcount 2",
                                        "break fflush", "tstart", "continue", "tstatus", "info tracepoints",
                                        "tfind end", "tfind 1", "print x"}});
  INFO(out.transcript());
  CHECK_THAT(out.gdb, ContainsRegex(R"(Trace stopped by tracepoint \d+\.)"));
  CHECK_THAT(out.gdb, Contains("Collected 2 trace frames."));
  CHECK_THAT(out.gdb, Contains("tracepoint already hit 2 times"));
  CHECK_THAT(out.gdb, Contains("$1 = 2"));
}

TEST_CASE("tracepoints: a circular buffer too small for every hit keeps the newest frames", "[e2e][trace]") {
  // leaf(i) for i = 0..99, where the global sink is i(i-1)/2; each frame holds sink (6 + 15
  // bytes): 400 bytes keep the last 18 of them (and room for an end marker, 6).
  auto out = e2e::run_gdb({.program = "calls",
                           .commands = {"break main", "continue",
                                        source({"trace leaf", "actions", "collect sink", "end"}),
                                        "set trace-buffer-size 400", "set circular-trace-buffer on", "break done",
                                        "tstart", "continue", "tstop", "tstatus", "tfind start", "print sink",
                                        "tfind 17", "print sink", "tfind 18"},
                           .args = {"loop", "100"}});
  INFO(out.transcript());
  CHECK_THAT(out.gdb, Contains("Trace buffer is circular"));
  CHECK_THAT(out.gdb, Contains("Buffer contains 18 trace frames (of 100 created total)."));
  CHECK_THAT(out.gdb, Contains("Trace buffer has 22 bytes of 400 bytes free"));
  CHECK_THAT(out.gdb, Contains("$1 = 3321\n"));  // 82 * 81 / 2
  CHECK_THAT(out.gdb, Contains("$2 = 4851\n"));  // 99 * 98 / 2
  CHECK_THAT(out.gdb, ContainsRegex(kNoFrame));
}

TEST_CASE("tracepoints: while-stepping collects a frame at each step after the hit", "[e2e][trace]") {
  auto out = e2e::run_gdb({.program = "simple",
                           .commands = {"break main", "continue",
                                        trace_square({"collect x", "while-stepping 3", "collect $regs", "end"}),
                                        "break fflush", "tstart", "continue", "tstop", "tstatus", "tfind 0",
                                        "print x", "tfind 1", "print/x $pc", "tfind 3", "print/x $pc", "tfind 4",
                                        "print x", "tfind none", "delete", "continue"}});
  INFO(out.transcript());
  // 4 hits, each with 3 steps after it.
  CHECK_THAT(out.gdb, Contains("Collected 16 trace frames."));
  CHECK_THAT(out.gdb, Contains("$1 = 1\n"));
  CHECK_THAT(out.gdb, Contains("$4 = 2\n"));
  const auto step1 = e2e::find_hex_after(out.gdb, "$2 = ");
  const auto step3 = e2e::find_hex_after(out.gdb, "$3 = ");
  REQUIRE(step1.has_value());
  REQUIRE(step3.has_value());
  CHECK(*step3 > *step1);  // further into square, one instruction a step
  CHECK_THAT(out.gdb, ContainsRegex(R"(\[Inferior 1 \(process \d+\) exited with code 07\])"));
}

TEST_CASE("tracepoints: hits in several threads each make a frame, on their own stacks", "[e2e][trace][threads]") {
  // Two threads each call leaf(1), leaf(2), leaf(3).
  auto out = e2e::run_gdb({.program = "calls",
                           .commands = {"break main", "continue",
                                        source({"trace leaf", "actions", "collect $regs, x", "end"}), "break done",
                                        "tstart", "continue", "tstop", "tstatus", "tfind 0", "print/x $sp",
                                        "print x", "tfind 1", "print/x $sp", "print x", "tfind 2", "print/x $sp",
                                        "print x", "tfind 3", "print/x $sp", "print x", "tfind 4", "print/x $sp",
                                        "print x", "tfind 5", "print/x $sp", "print x"},
                           .args = {"threads"},
                           .timeout = std::chrono::seconds(40)});
  INFO(out.transcript());
  CHECK_THAT(out.gdb, Contains("Collected 6 trace frames."));
  std::set<unsigned long> stacks;
  std::multiset<std::string> xs;
  for (int i = 0; i < 6; ++i) {
    auto sp = e2e::find_hex_after(out.gdb, "$" + std::to_string(2 * i + 1) + " = ");
    REQUIRE(sp.has_value());
    stacks.insert(*sp >> 20);  // each thread's stack is its own mapping, megabytes apart
    const std::string label = "$" + std::to_string(2 * i + 2) + " = ";
    const auto at = out.gdb.find(label);
    REQUIRE(at != std::string::npos);
    xs.insert(out.gdb.substr(at + label.size(), 1));
  }
  CHECK(stacks.size() == 2);
  CHECK(xs == std::multiset<std::string>{"1", "1", "2", "2", "3", "3"});
}

TEST_CASE("tracepoints: with disconnected tracing the run outlives GDB's connection; without, it stops",
          "[e2e][trace]") {
  // GDB disconnects right after tstart, connects again, and finds the run going on: it takes
  // the tracepoint back from the server (qTfP) and the hits of the rest of the run are there.
  auto kept = e2e::run_gdb({.program = "simple",
                            .commands = {"break main", "continue", trace_square({"collect x"}),
                                         "set disconnected-tracing on", "tstart", "disconnect",
                                         "target remote {target}", "info tracepoints", "break fflush", "continue",
                                         "tstop", "tstatus", "tfind 3", "print x", "kill"},
                            .remote_debug = true,
                            .server_once = false});
  INFO(kept.transcript());
  CHECK_THAT(kept.gdb, Contains("Trace is already running on the target."));
  CHECK_THAT(kept.gdb, Contains("is same as target's tracepoint"));
  CHECK_THAT(kept.server_err, Contains("<- $qTfP"));
  CHECK_THAT(kept.gdb, Contains("Collected 4 trace frames."));
  CHECK_THAT(kept.gdb, Contains("$1 = 4"));

  auto stopped = e2e::run_gdb({.program = "simple",
                               .commands = {"break main", "continue", trace_square({"collect x"}),
                                            "set disconnected-tracing off", "tstart", "disconnect",
                                            "target remote {target}", "tstatus", "kill"},
                               .server_once = false});
  INFO(stopped.transcript());
  CHECK_THAT(stopped.gdb, Contains("Trace stopped because of disconnection."));
}
