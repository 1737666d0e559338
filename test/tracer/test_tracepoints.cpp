// Trace experiments on real processes (tracer/linux/tracepoints.cpp): hits collect while the
// threads run on, GDB told nothing; a GDB breakpoint at the same address stops and the hit
// is collected once, however GDB steps on; the run's end takes the int3s out.
#include <cstring>
#include <set>

#include "test/support/skip.hpp"
#include "test/tracer/live_support.hpp"

using namespace test_tracer;
using tracer::StopReason;
using tracer::trace::Action;

namespace {

// threads: two workers call hit() once each, at the same moment, then the process exits 0
// (1 if hit() did not run twice).
struct TracedThreads {
  tracer::LinuxTarget target;
  tracer::Pid pid = 0;
  std::uint64_t hit = symbol("threads", "hit");

  TracedThreads() {
    REQUIRE(hit != 0);
    auto launched = target.launch({prog("threads"), {}, true, true});
    REQUIRE(launched.ok());
    pid = *launched;
    tracer::trace::Experiment& e = *target.experiment();
    REQUIRE(e.define({.number = 1, .address = hit, .actions = {Action{.kind = Action::Kind::Registers}}}));
    e.start(tracer::trace::timestamp_now());
    REQUIRE(target.place_tracepoints().ok());
  }
};

}  // namespace

TEST_CASE("tracepoints: both threads' hits collect and they run on; the program ends as it would",
          "[tracer][trace]") {
  REQUIRE_PTRACE();
  TracedThreads t;
  REQUIRE(t.target.resume(plan_all()).ok());
  auto ev = wait_stop(t.target);
  REQUIRE(ev);
  CHECK(ev->reason == StopReason::Exited);
  CHECK(ev->status == 0);
  const tracer::trace::Buffer& frames = t.target.experiment()->buffer();
  REQUIRE(frames.count() == 2);
  CHECK(frames.find(0)->pc == t.hit);
  CHECK(frames.find(1)->pc == t.hit);
  CHECK(frames.find(0)->registers.has_value());
}

TEST_CASE("tracepoints: with GDB's breakpoint at the same address each hit stops and collects once",
          "[tracer][trace]") {
  REQUIRE_PTRACE();
  TracedThreads t;
  REQUIRE(t.target.insert_breakpoint(tracer::BreakpointType::Software, t.hit, 1).ok());
  REQUIRE(t.target.resume(plan_all()).ok());
  auto first = wait_stop(t.target);
  REQUIRE(first);
  CHECK(first->reason == StopReason::SoftwareBreakpoint);
  // GDB steps the reporting thread over its breakpoint (out, step, back in), as GDB 13 does.
  REQUIRE(t.target.remove_breakpoint(tracer::BreakpointType::Software, t.hit, 1).ok());
  tracer::ThreadAction step;
  step.tid = first->tid;
  step.kind = tracer::ResumeKind::Step;
  REQUIRE(t.target.resume(tracer::ResumePlan{{step}}).ok());
  auto stepped = wait_stop(t.target);
  REQUIRE(stepped);
  CHECK(stepped->reason == StopReason::SingleStep);
  CHECK(stepped->tid == first->tid);
  REQUIRE(t.target.insert_breakpoint(tracer::BreakpointType::Software, t.hit, 1).ok());
  // The other worker's hit (pending, or on its way), then the same for it.
  REQUIRE(t.target.resume(plan_all()).ok());
  auto second = wait_stop(t.target);
  REQUIRE(second);
  CHECK(second->reason == StopReason::SoftwareBreakpoint);
  CHECK(second->tid != first->tid);
  REQUIRE(t.target.remove_breakpoint(tracer::BreakpointType::Software, t.hit, 1).ok());
  step.tid = second->tid;
  REQUIRE(t.target.resume(tracer::ResumePlan{{step}}).ok());
  auto stepped2 = wait_stop(t.target);
  REQUIRE(stepped2);
  CHECK(stepped2->reason == StopReason::SingleStep);
  REQUIRE(t.target.resume(plan_all()).ok());
  auto end = wait_stop(t.target);
  REQUIRE(end);
  CHECK(end->reason == StopReason::Exited);
  CHECK(end->status == 0);
  CHECK(t.target.experiment()->buffer().count() == 2);  // not 3 or 4: a step-over collects nothing
}

TEST_CASE("tracepoints: a pass count reached ends the run and takes the int3 out", "[tracer][trace]") {
  REQUIRE_PTRACE();
  TracedThreads t;
  t.target.experiment()->find(1, t.hit)->pass_count = 1;
  REQUIRE(t.target.resume(plan_all()).ok());
  auto ev = wait_stop(t.target);
  REQUIRE(ev);
  CHECK(ev->reason == StopReason::Exited);
  CHECK(ev->status == 0);
  CHECK_FALSE(t.target.experiment()->running());
  CHECK(t.target.experiment()->stop_reason() == tracer::trace::StopReason::PassCount);
  CHECK(t.target.experiment()->buffer().count() == 1);
}

TEST_CASE("fast tracepoints: the agent collects both threads' hits with no stop, even with no read before the exit",
          "[tracer][trace]") {
  REQUIRE_PTRACE();
  // hit+4: `lock add dword [rip+...], 1`, 8 bytes: the jump's place, moved to the pad.
  const std::uint64_t at = symbol("threads_agent", "hit") + 4;
  tracer::LinuxTarget target;
  auto launched = target.launch({prog("threads_agent"), {}, true, true});
  REQUIRE(launched.ok());
  // To main first: the agent is loaded (and has mapped its pads) once the dynamic linker ran.
  const std::uint64_t ready = symbol("threads_agent", "ready");
  REQUIRE(target.insert_breakpoint(tracer::BreakpointType::Software, ready, 1).ok());
  REQUIRE(target.resume(plan_all()).ok());
  auto at_ready = wait_stop(target);
  REQUIRE(at_ready);
  REQUIRE(at_ready->reason == StopReason::SoftwareBreakpoint);
  REQUIRE(target.remove_breakpoint(tracer::BreakpointType::Software, ready, 1).ok());
  CHECK(target.fast_tracepoint_min_length() == 5u);
  tracer::trace::Experiment& e = *target.experiment();
  REQUIRE(e.define({.number = 1, .address = at, .fast_length = 5,
                    .actions = {Action{.kind = Action::Kind::Registers},
                                Action{.kind = Action::Kind::Memory, .offset = symbol("threads_agent", "hits"), .length = 4}}}));
  e.start(tracer::trace::timestamp_now());
  REQUIRE(target.place_tracepoints().ok());
  // The jump is in memory (a read through the target shows the program's bytes).
  auto raw = read_raw_memory(*launched, at, 1);
  REQUIRE(raw);
  CHECK((*raw)[0] == 0xe9);
  CHECK(target.read_memory(at, 1).value()[0] == 0xf0);  // lock
  REQUIRE(target.resume(plan_all()).ok());
  auto ev = wait_stop(target);
  REQUIRE(ev);
  CHECK(ev->reason == StopReason::Exited);
  CHECK(ev->status == 0);  // both atomic adds ran, moved into the pad
  const tracer::trace::Buffer& frames = target.experiment()->buffer();
  REQUIRE(frames.count() == 2);
  std::set<std::uint64_t> sps;
  for (std::uint64_t i = 0; i < 2; ++i) {
    const tracer::trace::Frame& f = *frames.find(i);
    CHECK(f.pc == at);
    REQUIRE(f.registers.has_value());
    REQUIRE(f.memory.size() == 1);
    CHECK(f.memory[0].bytes.size() == 4);
    std::uint64_t rip = 0, rsp = 0;
    std::memcpy(&rip, f.registers->data() + 16 * 8, 8);  // (`g` order: rax..r15, rip)
    std::memcpy(&rsp, f.registers->data() + 7 * 8, 8);
    CHECK(rip == at);
    sps.insert(rsp);
  }
  CHECK(sps.size() == 2);  // each thread's own stack
  CHECK(e.tracepoints()[0].hits == 2);
}
