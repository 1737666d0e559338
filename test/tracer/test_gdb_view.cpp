// GDB's view of one thread (tracer/linux/gdb_view.hpp) driven by named events alone: resumes,
// reports, signals GDB gave that were not delivered yet, stops GDB asked for, step-overs.
#include <catch2/catch.hpp>

#include <csignal>

#include "tracer/linux/gdb_view.hpp"

using tracer::GdbView;
using tracer::ResumeKind;
using tracer::ThreadAction;

TEST_CASE("gdb view: a resume's signal is delivered once", "[gdb_view]") {
  GdbView v;
  CHECK_FALSE(v.resumed());
  v.resumed_by(ThreadAction{7, 0, ResumeKind::Continue, SIGUSR1});
  CHECK(v.resumed());
  CHECK_FALSE(v.stepping());
  CHECK(v.runs_with(v.take_resume_signal()) == SIGUSR1);
  CHECK(v.take_resume_signal() == 0);  // it ran with it: not again
  v.stop_reported(SIGTRAP);
  CHECK_FALSE(v.resumed());
  CHECK(v.reported_signal() == SIGTRAP);
  CHECK(v.runs_with(0) == 0);
  CHECK(v.reported_signal() == 0);  // GDB's resume said what becomes of it
}

TEST_CASE("gdb view: a signal GDB gave a thread that never ran is kept for its next runs",
          "[gdb_view]") {
  GdbView v;
  v.resumed_by(ThreadAction{7, 0, ResumeKind::Continue, SIGUSR1});
  v.resume_ended();  // another thread's event was reported before this one ran
  CHECK_FALSE(v.resumed());
  v.resumed_by(ThreadAction{7, 0, ResumeKind::Continue, SIGUSR2});
  v.resume_ended();
  // The next resume delivers the oldest first, the resume's own signal waits its turn.
  v.resumed_by(ThreadAction{7, 0, ResumeKind::Continue, SIGALRM});
  CHECK(v.runs_with(v.take_resume_signal()) == SIGUSR1);
  CHECK(v.runs_with(0) == SIGUSR2);
  CHECK(v.runs_with(0) == SIGALRM);
  CHECK(v.runs_with(0) == 0);
}

TEST_CASE("gdb view: a stop GDB asked for says its signal once", "[gdb_view]") {
  GdbView v;
  CHECK_FALSE(v.take_stop_saying().has_value());
  v.stop_to_say(0);  // vCont;t
  CHECK(v.take_stop_saying() == 0);
  CHECK_FALSE(v.take_stop_saying().has_value());
  v.stop_to_say(SIGINT);  // ^C in non-stop
  CHECK(v.take_stop_saying() == SIGINT);
  // Another stop of the thread (a fork event) reached GDB first: that answered it.
  v.stop_to_say(0);
  v.stop_reported(SIGTRAP);
  CHECK_FALSE(v.take_stop_saying().has_value());
}

TEST_CASE("gdb view: steps, step-overs and exec", "[gdb_view]") {
  GdbView v;
  v.resumed_by(ThreadAction{7, 0, ResumeKind::RangeStep});
  CHECK(v.stepping());
  v.deliver_when_run(SIGCHLD);  // a passed signal waits for another thread's step-over
  CHECK(v.take_resume_signal() == SIGCHLD);
  CHECK(v.take_resume_signal() == 0);  // once
  // The thread that called exec hands its view to the leader, named for it, with what GDB
  // asked to hear of it (QThreadOptions; a new thread has none).
  v.set_options(tracer::ThreadOptions{.clone_events = true, .exit_events = true});
  GdbView leader;
  CHECK(leader.options() == tracer::ThreadOptions{});
  leader.took_over_from(v, 5);
  CHECK(leader.resumed());
  CHECK(leader.action().tid == 5);
  CHECK(leader.stepping());
  CHECK(leader.options().clone_events);
  CHECK(leader.options().exit_events);
  GdbView all;
  all.runs_on(ThreadAction{});  // every thread's action
  leader.took_over_from(all, 5);
  CHECK(leader.action().tid == tracer::kAllThreads);
}
