// The one queue of events not reported yet: each thread's stop (at most one, kept in the
// thread so it goes with it) and the ends of processes, all stamped with the order they
// happened in. The policies (policy.cpp) and the attach (attach.cpp) choose what to report
// through it, and its tests drive the same functions with real LinuxThreads.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>

#include "tracer/linux/thread.hpp"
#include "tracer/types.hpp"

namespace tracer {

class PendingEvents {
 public:
  // t stopped with ev to report: the newest event.
  void hold(LinuxThread& t, const StopEvent& ev) { t.pending = PendingStop{ev, ++seq_}; }
  // A process ended: the newest event.
  void add_exit(const StopEvent& ev) { exits_.push_back(PendingStop{ev, ++seq_}); }

  bool has_exits() const { return !exits_.empty(); }
  void drop_exits_of(Pid pid) {
    std::erase_if(exits_, [pid](const PendingStop& e) { return e.event.pid == pid; });
  }
  void clear_exits() { exits_.clear(); }

  // Among the threads ForEach visits whose stop `rank` admits (a number, lower first; nullopt:
  // not now), the one of lowest rank, the oldest of those; nullptr when none.
  template <class ForEach, class Rank>
  static LinuxThread* next_stop(ForEach&& for_each, Rank&& rank) {
    LinuxThread* best = nullptr;
    int best_rank = 0;
    for_each([&](LinuxThread& t) {
      if (!t.pending) {
        return;
      }
      std::optional<int> r = rank(t);
      if (r && (best == nullptr || *r < best_rank || (*r == best_rank && t.pending->seq < best->pending->seq))) {
        best = &t;
        best_rank = *r;
      }
    });
    return best;
  }

  // What to report next: a thread's stop (the best `rank` admits) or the oldest end of a
  // process, which comes first when it is older (ByAge) or only when no stop is left.
  enum class ExitOrder { ByAge, AfterStops };
  struct Next {
    LinuxThread* stop = nullptr;  // this thread's stop
    bool exit = false;            // else the oldest exit (neither: nothing to report)
    explicit operator bool() const { return stop != nullptr || exit; }
  };
  template <class ForEach, class Rank>
  Next next(ForEach&& for_each, Rank&& rank, ExitOrder order) const {
    LinuxThread* t = next_stop(for_each, rank);
    const bool exit = !exits_.empty() &&
                      (t == nullptr || (order == ExitOrder::ByAge && exits_.front().seq < t->pending->seq));
    return exit ? Next{nullptr, true} : Next{t, false};
  }
  // Removes what next() chose from the queue and returns it.
  StopEvent take(const Next& n) {
    if (n.exit) {
      StopEvent ev = exits_.front().event;
      exits_.pop_front();
      return ev;
    }
    StopEvent ev = n.stop->pending->event;
    n.stop->pending.reset();
    return ev;
  }

 private:
  std::uint64_t seq_ = 0;
  std::deque<PendingStop> exits_;  // in the order they happened
};

// All-stop: the threads the resume let run; the one GDB steps first (a step's trap kept
// pending and reported after GDB continued that thread would reach it as a random SIGTRAP,
// as gdbserver knows), then the oldest.
inline std::optional<int> all_stop_rank(const LinuxThread& t) {
  if (!t.gdb.resumed()) {
    return std::nullopt;
  }
  const bool stepped = t.gdb.stepping();
  return stepped ? 0 : 1;
}

// Non-stop: each thread GDB lets run, as soon as it is stopped, oldest first.
inline std::optional<int> non_stop_rank(const LinuxThread& t) {
  return t.gdb.resumed() && t.stopped() ? std::optional<int>(0) : std::nullopt;
}

// After an attach in all-stop: a signal a thread stopped with instead of our SIGSTOP.
inline std::optional<int> attach_signal_rank(const LinuxThread& t) {
  return !t.gdb.resumed() && t.pending->event.reason == StopReason::Signal ? std::optional<int>(0) : std::nullopt;
}

}  // namespace tracer
