// The thread state machine (tracer/linux/thread_run.hpp) driven by named events alone, as the
// core drives it from wait statuses: stops requested and seen, our SIGSTOP told from the
// program's, step-overs, threads born and attached, zombies.
#include <catch2/catch.hpp>

#include "tracer/linux/thread_run.hpp"

using tracer::ThreadRun;
using tracer::ThreadState;

TEST_CASE("thread run: a stop requested, then seen; our SIGSTOP is taken once", "[thread_run]") {
  ThreadRun t;
  CHECK(t.stopped());
  CHECK_FALSE(t.may_request_stop());  // stopped already
  t.ran(false, false);
  CHECK(t.state() == ThreadState::Running);
  REQUIRE(t.may_request_stop());
  t.stop_requested();
  CHECK(t.state() == ThreadState::StopRequested);
  CHECK_FALSE(t.may_request_stop());  // one SIGSTOP on its way is enough
  // A breakpoint is hit before our SIGSTOP arrives: stopped, the SIGSTOP still expected.
  auto seen = t.saw_stop();
  CHECK(seen.was == ThreadState::StopRequested);
  CHECK_FALSE(seen.first);
  CHECK(t.stopped());
  CHECK_FALSE(t.took_our_sigstop(SIGTRAP));
  CHECK(t.sigstop_expected());
  // Resumed, then the SIGSTOP arrives: ours, not the program's, and only once.
  t.ran(false, false);
  (void)t.saw_stop();
  CHECK(t.took_our_sigstop(SIGSTOP));
  CHECK_FALSE(t.sigstop_expected());
  CHECK_FALSE(t.took_our_sigstop(SIGSTOP));  // a second SIGSTOP is the program's
}

TEST_CASE("thread run: a new thread runs until its first stop and cannot be asked to stop", "[thread_run]") {
  ThreadRun t;
  t.born();
  CHECK(t.running());
  CHECK_FALSE(t.started());
  CHECK_FALSE(t.may_request_stop());  // its birth SIGSTOP is coming anyway
  auto seen = t.saw_stop();
  CHECK(seen.first);
  CHECK(t.started());
  CHECK_FALSE(t.saw_stop().first);
}

TEST_CASE("thread run: attaching expects the SIGSTOP PTRACE_ATTACH causes", "[thread_run]") {
  ThreadRun t;
  t.attaching();
  CHECK(t.running());
  CHECK(t.sigstop_expected());
  (void)t.saw_stop();
  CHECK_FALSE(t.took_our_sigstop(SIGALRM));  // a signal pending as we attached comes first
  CHECK(t.took_our_sigstop(SIGSTOP));
}

TEST_CASE("thread run: steps, step-overs and a step that was none", "[thread_run]") {
  ThreadRun t;
  t.ran(true, true);
  CHECK(t.stepping());
  CHECK(t.collector_step());
  auto seen = t.saw_stop();
  t.stop_undone(seen);  // a step reported at a syscall's exit before it ran: it runs on
  CHECK(t.state() == ThreadState::Running);
  (void)t.saw_stop();
  t.ran(true, false);  // a step-over's step (step_over.hpp says whose)
  CHECK(t.state() == ThreadState::Running);
  CHECK(t.running());
  CHECK(t.stepping());
  CHECK_FALSE(t.collector_step());
  CHECK(t.saw_stop().was == ThreadState::Running);
  ThreadRun after_exec;
  after_exec.took_over_from(t);
  CHECK(after_exec.stepping());
}

TEST_CASE("thread run: a zombie leader never stops again", "[thread_run]") {
  ThreadRun t;
  t.ran(false, false);
  t.became_zombie();
  CHECK(t.state() == ThreadState::Zombie);
  CHECK_FALSE(t.running());
  CHECK_FALSE(t.may_request_stop());
  t.ended();  // its process ended: shown stopped until GDB hears
  CHECK(t.stopped());
}
