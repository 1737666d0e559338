// The pending-event queue (tracer/linux/pending_events.hpp) on real LinuxThreads, with the
// ranks and exit orders the policies use: which event is reported next, that each is reported
// once, in the order the events came (ends held for a resume included), and what drops them.
#include <catch2/catch.hpp>

#include <map>
#include <optional>

#include "tracer/linux/pending_events.hpp"

using tracer::LinuxThread;
using tracer::PendingEvents;
using tracer::StopEvent;
using tracer::StopReason;
using Order = PendingEvents::ExitOrder;
using When = PendingEvents::When;

namespace {

struct Threads {
  std::map<tracer::Tid, LinuxThread> map;
  PendingEvents queue;

  LinuxThread& thread(tracer::Tid tid) {
    LinuxThread& t = map.try_emplace(tid, tracer::linux_kernel()).first->second;
    t.tid = tid;
    t.pid = 100;
    return t;
  }
  void stop(tracer::Tid tid, StopReason reason = StopReason::SoftwareBreakpoint, int sig = 5) {
    queue.hold(thread(tid), StopEvent{reason, 100, tid, sig});
  }
  void exit(tracer::Pid pid, When when = When::Now) { queue.add_exit(StopEvent{StopReason::Exited, pid, pid, 0}, when); }
  void thread_exit(tracer::Pid pid, tracer::Tid tid, When when = When::Now) {
    queue.add_exit(StopEvent{StopReason::ThreadExited, pid, tid, 0}, when);
  }
  // A resume of process pid (0: of all): its held ends may be reported now.
  void resume_held(tracer::Pid pid = 0) {
    queue.release([pid](const StopEvent& ev) { return pid == 0 || ev.pid == pid; });
  }
  auto for_each() {
    return [this](auto&& visit) {
      for (auto& [tid, t] : map) {
        visit(t);
      }
    };
  }
  // The next report as a policy takes it: "tid" for a stop, "exit pid" for a process's end,
  // "gone pid.tid" for a thread's exit.
  template <class Rank>
  std::optional<std::string> take(Rank rank, Order order) {
    auto next = queue.next(for_each(), rank, order);
    if (!next) {
      return std::nullopt;
    }
    StopEvent ev = queue.take(next);
    if (ev.reason == StopReason::ThreadExited) {
      return "gone " + std::to_string(ev.pid) + "." + std::to_string(ev.tid);
    }
    return next.exit ? "exit " + std::to_string(ev.pid) : std::to_string(ev.tid);
  }
  std::optional<std::string> all_stop() { return take(tracer::all_stop_rank, Order::ByAge); }
  std::optional<std::string> non_stop() { return take(tracer::non_stop_rank, Order::AfterStops); }
};

}  // namespace

TEST_CASE("pending events: all-stop reports the oldest first, one per take, each once", "[pending]") {
  Threads ts;
  for (tracer::Tid tid : {100, 101, 102, 103}) {
    ts.thread(tid).gdb.resumed_by(tracer::ThreadAction{});
  }
  CHECK_FALSE(ts.all_stop());
  ts.stop(103);
  ts.stop(102);  // happened after 103's
  CHECK(ts.all_stop() == "103");
  CHECK(ts.all_stop() == "102");
  CHECK_FALSE(ts.all_stop());  // never reported twice
}

TEST_CASE("pending events: a thread left out of the resume keeps its event", "[pending]") {
  Threads ts;
  ts.stop(101);
  ts.thread(100).gdb.resumed_by(tracer::ThreadAction{});  // scheduler locking resumed only 100
  CHECK_FALSE(ts.all_stop());
  CHECK(PendingEvents::has_stop(ts.map.at(101)));
  ts.thread(101).gdb.resumed_by(tracer::ThreadAction{});  // the next resume includes it: reported at once
  ts.stop(100);
  CHECK(ts.all_stop() == "101");
  CHECK(ts.all_stop() == "100");
}

TEST_CASE("pending events: all-stop reports the thread GDB steps before older events", "[pending]") {
  Threads ts;
  ts.thread(100).gdb.resumed_by(tracer::ThreadAction{});
  ts.thread(101).gdb.resumed_by(tracer::ThreadAction{101, 0, tracer::ResumeKind::Step});
  ts.stop(100);                           // a breakpoint hit by another thread, first
  ts.stop(101, StopReason::SingleStep);   // then the step's trap
  CHECK(ts.all_stop() == "101");
  CHECK(ts.all_stop() == "100");
  ts.thread(101).gdb.resumed_by(tracer::ThreadAction{101, 0, tracer::ResumeKind::RangeStep});
  ts.stop(100);
  ts.stop(101, StopReason::SingleStep);
  CHECK(ts.all_stop() == "101");
}

TEST_CASE("pending events: all-stop puts stops and process ends in the order they came", "[pending]") {
  Threads ts;
  ts.thread(100).gdb.resumed_by(tracer::ThreadAction{});
  ts.thread(101).gdb.resumed_by(tracer::ThreadAction{});
  ts.exit(200);  // another process ended first
  ts.stop(100);
  ts.exit(300);
  ts.stop(101);
  CHECK(ts.all_stop() == "exit 200");
  CHECK(ts.all_stop() == "100");
  CHECK(ts.all_stop() == "exit 300");
  CHECK(ts.all_stop() == "101");
  CHECK_FALSE(ts.all_stop());
  CHECK_FALSE(ts.queue.has_exits());
}

TEST_CASE("pending events: non-stop reports stopped threads GDB runs, ends after them", "[pending]") {
  Threads ts;
  ts.exit(200);
  ts.stop(100);
  ts.thread(100).gdb.resumed_by(tracer::ThreadAction{});
  ts.stop(101);
  ts.thread(101).gdb.resumed_by(tracer::ThreadAction{});
  ts.thread(101).run.ran(true, false);  // not stopped: not yet
  CHECK(ts.non_stop() == "100");
  CHECK(ts.non_stop() == "exit 200");
  CHECK_FALSE(ts.non_stop());
  (void)ts.thread(101).run.saw_stop();
  CHECK(ts.non_stop() == "101");
}

TEST_CASE("pending events: a detached or killed process's ends are not reported", "[pending]") {
  Threads ts;
  ts.exit(200);
  ts.exit(300);
  ts.queue.drop_process(200);
  CHECK(ts.all_stop() == "exit 300");
  ts.exit(400);
  ts.queue.clear();
  CHECK_FALSE(ts.queue.has_exits());
}

TEST_CASE("pending events: after an attach, the oldest signal a thread stopped with", "[pending]") {
  Threads ts;
  ts.stop(100, StopReason::Signal, 19);  // our SIGSTOP... a signal stop all the same
  ts.stop(101, StopReason::Signal, 14);
  ts.stop(102, StopReason::SoftwareBreakpoint);
  auto* first = PendingEvents::next_stop(ts.for_each(), tracer::attach_signal_rank);
  REQUIRE(first != nullptr);
  CHECK(first->tid == 100);
  ts.queue.drop_stop(ts.map.at(100));
  first = PendingEvents::next_stop(ts.for_each(), tracer::attach_signal_rank);
  REQUIRE(first != nullptr);
  CHECK(first->tid == 101);
}

TEST_CASE("pending events: a process end held while GDB had it stopped comes after the resume, by age", "[pending]") {
  Threads ts;
  ts.thread(100).gdb.resumed_by(tracer::ThreadAction{});
  ts.exit(200, When::AtResume);  // SIGKILL from outside while GDB had 200 stopped
  CHECK_FALSE(ts.queue.has_exits());
  CHECK(ts.queue.has_held());
  ts.stop(100);  // after 200's end
  CHECK(ts.all_stop() == "100");  // 200 was not resumed: its end waits
  CHECK_FALSE(ts.all_stop());
  ts.stop(101);  // 101, which GDB had stopped too, stops after the end (kept pending)
  ts.resume_held(300);  // resuming another process does not release it
  CHECK_FALSE(ts.queue.has_exits());
  ts.resume_held(200);
  ts.thread(101).gdb.resumed_by(tracer::ThreadAction{});
  ts.thread(100).gdb.resumed_by(tracer::ThreadAction{});
  ts.stop(100);
  // Stamped when it happened, not when the resume handed it over: before the stops that came
  // after it (numbered at the resume, it came after 101's).
  CHECK(ts.all_stop() == "exit 200");
  CHECK(ts.all_stop() == "101");
  CHECK(ts.all_stop() == "100");
  CHECK_FALSE(ts.queue.has_held());
}

TEST_CASE("pending events: a held end older than a stop waits behind it until released", "[pending]") {
  Threads ts;
  ts.thread(100).gdb.resumed_by(tracer::ThreadAction{});
  ts.stop(102);                  // GDB had 102 stopped: kept
  ts.exit(200, When::AtResume);  // then 200 died stopped
  ts.stop(100);
  CHECK(ts.all_stop() == "100");
  ts.resume_held();
  ts.thread(102).gdb.resumed_by(tracer::ThreadAction{});
  CHECK(ts.all_stop() == "102");  // older than 200's end
  CHECK(ts.all_stop() == "exit 200");
  CHECK_FALSE(ts.all_stop());
}

TEST_CASE("pending events: held thread exits are told at the resume, before or after stops by age", "[pending]") {
  Threads ts;
  ts.thread(100).gdb.resumed_by(tracer::ThreadAction{});  // scheduler locking: 100 runs alone
  ts.stop(102);                                // a stop of 102, GDB had it stopped
  ts.thread_exit(100, 101, When::AtResume);    // 101 exited, GDB had it stopped
  ts.thread_exit(100, 103, When::Now);         // 103 exited running: told at once
  ts.stop(100);
  CHECK(ts.all_stop() == "gone 100.103");
  CHECK(ts.all_stop() == "100");
  CHECK_FALSE(ts.all_stop());  // 101's exit waits for GDB to resume 101
  ts.queue.release([](const StopEvent& ev) { return ev.tid == 101; });
  ts.thread(102).gdb.resumed_by(tracer::ThreadAction{});
  ts.thread(100).gdb.resumed_by(tracer::ThreadAction{});
  ts.stop(100);
  CHECK(ts.all_stop() == "102");          // older than 101's exit
  CHECK(ts.all_stop() == "gone 100.101");  // older than 100's new stop
  CHECK(ts.all_stop() == "100");
  CHECK_FALSE(ts.all_stop());
}

TEST_CASE("pending events: an exec drops the held exits of the threads it killed, only those", "[pending]") {
  Threads ts;
  ts.thread_exit(100, 101, When::AtResume);
  ts.thread_exit(100, 102, When::Now);
  ts.thread_exit(300, 301, When::AtResume);  // another process's
  ts.exit(400, When::AtResume);
  ts.queue.drop_held_exits_of(100);
  ts.resume_held();
  CHECK(ts.all_stop() == "gone 100.102");
  CHECK(ts.all_stop() == "gone 300.301");
  CHECK(ts.all_stop() == "exit 400");
  CHECK_FALSE(ts.all_stop());
}

TEST_CASE("pending events: a detach or kill drops every end of the process, held or not", "[pending]") {
  Threads ts;
  ts.thread_exit(200, 201, When::AtResume);
  ts.thread_exit(200, 202, When::Now);
  ts.exit(200, When::AtResume);
  ts.exit(300, When::AtResume);
  ts.queue.drop_process(200);
  CHECK_FALSE(ts.queue.has_exits());
  ts.resume_held();
  CHECK(ts.all_stop() == "exit 300");
  CHECK_FALSE(ts.all_stop());
  CHECK_FALSE(ts.queue.has_held());
  ts.exit(400, When::AtResume);
  ts.queue.clear();  // the server kills everything
  CHECK_FALSE(ts.queue.has_held());
}

TEST_CASE("pending events: non-stop tells a released process end after the stops", "[pending]") {
  Threads ts;
  ts.exit(200, When::AtResume);
  ts.stop(100);
  CHECK_FALSE(ts.non_stop());  // 100 not resumed, 200's end held
  ts.resume_held(200);
  ts.thread(100).gdb.resumed_by(tracer::ThreadAction{});
  CHECK(ts.non_stop() == "100");
  CHECK(ts.non_stop() == "exit 200");
  CHECK_FALSE(ts.non_stop());
}
