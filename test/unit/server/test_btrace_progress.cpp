// The progress of a long software recording, as the server says it (server/btrace_progress).
#include <catch2/catch.hpp>

#include "server/btrace_progress.hpp"
#include "test/support/fake_target.hpp"

using server::BtraceProgress;
using namespace std::chrono_literals;

namespace {

// Thread 101 recorded by a software collector named `backend`, with n more branches.
void record(test_support::FakeTarget& target, const std::string& backend, int n) {
  auto& tracer = target.tracers[101];
  if (!tracer) {
    tracer = std::make_unique<tracer::RingBufferTracer>(backend, tracer::BtraceConfig{});
  }
  for (int i = 0; i < n; ++i) {
    tracer->record(tracer::BranchSample{0x401000, 0x402000});
  }
}

}  // namespace

TEST_CASE("progress_line: branches, seconds and the rate in words", "[btrace][progress]") {
  CHECK(server::progress_line("soft", 1'234'567, 10) ==
        "hindsight: soft has recorded 1.2 million branches in 10 s (123456 a second)");
  CHECK(server::progress_line("step", 2'500'000, 5) ==
        "hindsight: step has recorded 2.5 million branches in 5 s (500000 a second)");
}

TEST_CASE("BtraceProgress: said while a software collector records, the advice once, nothing when idle",
          "[btrace][progress]") {
  test_support::FakeTarget target;
  std::vector<std::string> said;
  BtraceProgress progress([&](const std::string& line) { said.push_back(line); }, /*dbt_built=*/true);
  const auto t0 = BtraceProgress::Clock::now();
  progress.tick(target, t0);  // nothing traced: nothing said
  record(target, "soft", 100);
  progress.tick(target, t0 + 5s);  // the run's first tick: the count starts
  CHECK(said.empty());
  record(target, "soft", 2'000'000);
  progress.tick(target, t0 + 15s);
  REQUIRE(said.size() == 2);
  CHECK(said[0] == "hindsight: soft has recorded 2.0 million branches in 10 s (200000 a second)");
  // The in-process recorder first (at launch and at attach alike), dbt for a program it starts.
  CHECK(said[1] == "hindsight: software recording stops the program at every branch; for long recordings use the "
                   "in-process recorder (--btrace=inproc) where it can come in, or start the program with "
                   "--btrace=dbt (docs/btrace.md)");
  progress.tick(target, t0 + 20s);  // nothing recorded since: the program waits, nothing said
  CHECK(said.size() == 2);
  record(target, "soft", 10);
  progress.tick(target, t0 + 25s);
  REQUIRE(said.size() == 3);  // the advice is not repeated
  CHECK(said[2].find("2.0 million branches in 20 s") != std::string::npos);
  progress.stopped();  // a new run counts anew
  record(target, "soft", 10);
  progress.tick(target, t0 + 30s);
  CHECK(said.size() == 3);
}

TEST_CASE("BtraceProgress: nothing for the fast collectors; where dbt is not built, the advice names inproc alone",
          "[btrace][progress]") {
  test_support::FakeTarget target;
  std::vector<std::string> said;
  BtraceProgress progress([&](const std::string& line) { said.push_back(line); }, /*dbt_built=*/false);
  const auto t0 = BtraceProgress::Clock::now();
  record(target, "dbt", 10);
  progress.tick(target, t0);
  record(target, "dbt", 10);
  progress.tick(target, t0 + 5s);
  CHECK(said.empty());
  target.tracers.clear();
  record(target, "step", 10);
  progress.tick(target, t0 + 10s);
  record(target, "step", 10);
  progress.tick(target, t0 + 15s);
  REQUIRE(said.size() == 2);
  CHECK(said[0].find("step has recorded 10 branches in 5 s") != std::string::npos);
  CHECK(said[1] == "hindsight: software recording stops the program at every branch; for long recordings use the "
                   "in-process recorder (--btrace=inproc) where it can come in (docs/btrace.md)");
}

TEST_CASE("BtraceProgress: asked every second, says a line at most every five", "[btrace][progress]") {
  test_support::FakeTarget target;
  std::vector<std::string> said;
  BtraceProgress progress([&](const std::string& line) { said.push_back(line); }, /*dbt_built=*/false);
  const auto t0 = BtraceProgress::Clock::now();
  record(target, "soft", 1);
  progress.tick(target, t0);  // the run's first tick
  for (int s = 1; s < 5; ++s) {
    record(target, "soft", 1000);
    progress.tick(target, t0 + std::chrono::seconds(s));
  }
  CHECK(said.empty());
  record(target, "soft", 1000);
  progress.tick(target, t0 + 5s);
  REQUIRE(said.size() == 2);  // (the line, then the advice, once)
  CHECK(said[0] == "hindsight: soft has recorded 5000 branches in 5 s (1000 a second)");
  record(target, "soft", 1000);
  progress.tick(target, t0 + 6s);
  CHECK(said.size() == 2);
  progress.tick(target, t0 + 10s);
  CHECK(said.size() == 3);
}
