// The all-stop pending-event queue (tracer/linux/pending_events.hpp) on hand-made threads.
#include <catch2/catch.hpp>

#include <map>
#include <optional>

#include "tracer/linux/pending_events.hpp"
#include "tracer/types.hpp"

namespace {

struct FakeThread {
  bool resumed = false;
  std::optional<tracer::StopEvent> pending;
  std::uint64_t pending_seq = 0;
};

// Takes the next report the way take_report does: oldest first, then cleared.
std::optional<tracer::Tid> take(std::map<tracer::Tid, FakeThread>& threads) {
  FakeThread* t = tracer::oldest_pending(threads);
  if (t == nullptr) {
    return std::nullopt;
  }
  tracer::Tid tid = t->pending->tid;
  t->pending.reset();
  return tid;
}

void add_pending(std::map<tracer::Tid, FakeThread>& threads, tracer::Tid tid, std::uint64_t seq) {
  threads[tid].pending = tracer::StopEvent{tracer::StopReason::SoftwareBreakpoint, 100, tid, 5};
  threads[tid].pending_seq = seq;
}

}  // namespace

TEST_CASE("pending events: reported oldest first, one per resume, each once", "[pending]") {
  std::map<tracer::Tid, FakeThread> threads;
  for (tracer::Tid tid : {100, 101, 102, 103}) {
    threads[tid].resumed = true;
  }
  CHECK(tracer::oldest_pending(threads) == nullptr);
  // Two threads hit breakpoints at once; 102's event came first.
  add_pending(threads, 103, 8);
  add_pending(threads, 102, 7);
  CHECK(take(threads) == 102);
  CHECK(take(threads) == 103);
  CHECK(take(threads) == std::nullopt);  // never reported twice
}

TEST_CASE("pending events: a thread left out of the resume keeps its event", "[pending]") {
  std::map<tracer::Tid, FakeThread> threads;
  add_pending(threads, 101, 1);
  threads[101].resumed = false;  // e.g. scheduler-locking resumed only 100
  threads[100].resumed = true;
  CHECK(take(threads) == std::nullopt);
  CHECK(threads[101].pending.has_value());
  threads[101].resumed = true;  // the next resume includes it: reported at once
  add_pending(threads, 100, 2);
  CHECK(take(threads) == 101);
  CHECK(take(threads) == 100);
}
