// The collector bookkeeping every backend shares: start, stop, and histories that outlive
// their threads until tracing stops.
#include <catch2/catch.hpp>

#include "test/support/fake_collector_host.hpp"
#include "tracer/btrace/soft_step.hpp"

using tracer::BtraceConfig;
using tracer::SoftStepCollector;

TEST_CASE("collector: a thread's history outlives it until recording stops", "[collector]") {
  SoftStepCollector c;
  REQUIRE(c.start(10, BtraceConfig{}).ok());
  REQUIRE(c.start(11, BtraceConfig{}).ok());
  auto again = c.start(10, BtraceConfig{});
  REQUIRE_FALSE(again.ok());
  CHECK(again.error().message().find("Btrace already enabled.") != std::string::npos);
  CHECK(c.traced_count() == 2);
  c.thread_exited(11);
  CHECK_FALSE(c.tracing(11));
  CHECK(c.tracer(11) != nullptr);  // still readable
  CHECK(c.retired_count() == 1);
  c.stop(10);  // the last live thread: `record stop`
  CHECK(c.traced_count() == 0);
  CHECK(c.retired_count() == 0);
  CHECK(c.tracer(11) == nullptr);
}

TEST_CASE("collector: only traced threads are single-stepped", "[collector]") {
  SoftStepCollector c;
  REQUIRE(c.start(10, BtraceConfig{}).ok());
  test_support::FakeCollectorHost host;
  CHECK(c.wants_step(10, 0x1000, 0, false, host));
  CHECK_FALSE(c.wants_step(12, 0x1000, 0, false, host));
}
