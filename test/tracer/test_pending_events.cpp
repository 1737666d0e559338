// The pending-event queue (tracer/linux/pending_events.hpp) on real LinuxThreads, with the
// ranks and exit orders the policies use: which event is reported next, and that each is
// reported once.
#include <catch2/catch.hpp>

#include <map>
#include <optional>

#include "tracer/linux/pending_events.hpp"

using tracer::LinuxThread;
using tracer::PendingEvents;
using tracer::StopEvent;
using tracer::StopReason;
using Order = PendingEvents::ExitOrder;

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
  void exit(tracer::Pid pid) { queue.add_exit(StopEvent{StopReason::Exited, pid, pid, 0}); }
  auto for_each() {
    return [this](auto&& visit) {
      for (auto& [tid, t] : map) {
        visit(t);
      }
    };
  }
  // The next report as a policy takes it: "tid" for a stop, "exit pid" for an end.
  template <class Rank>
  std::optional<std::string> take(Rank rank, Order order) {
    auto next = queue.next(for_each(), rank, order);
    if (!next) {
      return std::nullopt;
    }
    StopEvent ev = queue.take(next);
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
  CHECK(ts.map.at(101).pending.has_value());
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
  ts.queue.drop_exits_of(200);
  CHECK(ts.all_stop() == "exit 300");
  ts.exit(400);
  ts.queue.clear_exits();
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
  ts.map.at(100).pending.reset();
  first = PendingEvents::next_stop(ts.for_each(), tracer::attach_signal_rank);
  REQUIRE(first != nullptr);
  CHECK(first->tid == 101);
}
