// All-stop's phase (tracer/linux/all_stop.hpp) driven alone: a resume, the stopping of every
// thread for one event, a ^C that is reported, or that loses the race and stays.
#include <catch2/catch.hpp>

#include "tracer/linux/all_stop.hpp"

using tracer::AllStopPhase;

TEST_CASE("all-stop phase: resume, stop everything once, report", "[all_stop]") {
  AllStopPhase a;
  CHECK_FALSE(a.interrupted());  // nothing runs: nothing to interrupt
  a.resumed();
  CHECK(a.running());
  CHECK(a.begin_stopping());        // the first event: SIGSTOPs go out
  CHECK_FALSE(a.begin_stopping());  // later polls while they come: not again
  CHECK(a.stopping());
  a.settled();
  CHECK_FALSE(a.stopping());
  a.reported(false);
  CHECK_FALSE(a.running());
}

TEST_CASE("all-stop phase: a ^C is reported, or stays when it lost the race", "[all_stop]") {
  AllStopPhase a;
  a.resumed();
  CHECK(a.interrupted());
  CHECK(a.interrupt_requested());
  // Another thread's breakpoint came first and a stop still waits: the ^C stays for the next resume.
  a.reported(true);
  CHECK(a.interrupt_requested());
  CHECK_FALSE(a.running());
  a.resumed();
  // Reported as the SIGINT itself: gone.
  a.reported(false);
  CHECK_FALSE(a.interrupt_requested());
  // A single-step's trap stands for it.
  a.resumed();
  (void)a.interrupted();
  CHECK(a.take_interrupt());
  CHECK_FALSE(a.take_interrupt());
  a.reset();
  CHECK_FALSE(a.running());
  CHECK_FALSE(a.stopping());
}
