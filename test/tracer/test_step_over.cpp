// A step-over's one record (tracer/linux/step_over.hpp) driven by its named events alone:
// started, begun, finished; its thread gone; the signal its step delivers; the threads paused
// for it and let go after.
#include <catch2/catch.hpp>

#include <csignal>

#include "tracer/linux/step_over.hpp"

using tracer::StepOver;

namespace {
constexpr tracer::Tid kA = 100;
constexpr tracer::Tid kB = 101;
constexpr tracer::Tid kC = 102;
constexpr tracer::Addr kAt = 0x401000;
}  // namespace

TEST_CASE("step over: none until started; the others wait while it pauses them", "[step_over]") {
  StepOver s;
  CHECK_FALSE(s.active());
  CHECK_FALSE(s.holds(kA));
  CHECK_FALSE(s.of(kA));
  s.pause(kB);  // no step-over: nothing to wait for
  CHECK_FALSE(s.paused(kB));
  s.start(kA, kAt, 0);
  CHECK(s.active());
  CHECK(s.pausing());
  CHECK(s.thread() == kA);
  CHECK(s.addr() == kAt);
  CHECK(s.of(kA));
  CHECK_FALSE(s.stepping(kA));  // not before the others have stopped
  CHECK_FALSE(s.holds(kA));
  CHECK(s.holds(kB));
  s.pause(kA);  // its own thread is never paused for it
  CHECK_FALSE(s.paused(kA));
}

TEST_CASE("step over: begun and finished, the paused threads let go", "[step_over]") {
  StepOver s;
  s.start(kA, kAt, 0);
  s.pause(kB);
  s.pause(kC);
  s.unpause(kC);  // GDB had it stopped after all
  CHECK(s.paused(kB));
  CHECK_FALSE(s.paused(kC));
  CHECK(s.began() == 0);
  CHECK(s.phase() == StepOver::Phase::Stepping);
  CHECK(s.stepping(kA));
  CHECK_FALSE(s.stepping(kB));
  CHECK(s.holds(kB));
  const StepOver::Ended ended = s.finish();
  CHECK(ended.lifted);  // the int3 goes back
  CHECK(ended.addr == kAt);
  CHECK(ended.paused == std::set<tracer::Tid>{kB});
  CHECK_FALSE(s.active());
  CHECK_FALSE(s.paused(kB));
  CHECK_FALSE(s.holds(kB));
}

TEST_CASE("step over: the signal its step delivers, once", "[step_over]") {
  StepOver s;
  s.start(kA, kAt, SIGUSR1);  // delivered before the instruction runs: one step does both
  CHECK(s.began() == SIGUSR1);
  (void)s.finish();
  s.start(kB, kAt + 1, 0);  // the next one delivers nothing of the last
  CHECK(s.began() == 0);
}

TEST_CASE("step over: its thread dies, before or while it steps", "[step_over]") {
  StepOver s;
  SECTION("while the others are paused: nothing was lifted") {
    s.start(kA, kAt, SIGUSR1);
    s.pause(kB);
    const StepOver::Ended ended = s.finish();
    CHECK_FALSE(ended.lifted);
    CHECK(ended.paused == std::set<tracer::Tid>{kB});
  }
  SECTION("while it steps: the int3 goes back") {
    s.start(kA, kAt, 0);
    s.pause(kB);
    (void)s.began();
    CHECK(s.finish().lifted);
  }
  CHECK_FALSE(s.active());
  CHECK_FALSE(s.paused(kB));
  s.start(kB, kAt, 0);  // a new one may start
  CHECK(s.of(kB));
  CHECK(s.began() == 0);  // (the dead one's signal is not this one's)
}

TEST_CASE("step over: abandoned (all-stop stopped everything first, an exec)", "[step_over]") {
  StepOver s;
  s.start(kA, kAt, SIGUSR2);
  s.pause(kB);
  s.abandon();
  CHECK_FALSE(s.active());
  CHECK_FALSE(s.paused(kB));
  CHECK(s.phase() == StepOver::Phase::None);
  CHECK(s.thread() == 0);
}
