// The one holder of the events GDB has not heard of yet: each thread's stop, the exits of
// threads and the ends of processes, stamped from one sequence when the tracer sees them. It
// alone adds, orders, hands over and removes them; the policies (policy.cpp), the resume
// (resume.cpp) and the attach (attach.cpp) ask it through named operations, and its tests drive
// the same functions with real LinuxThreads.
//
// A thread's stop (at most one) is stored in the thread, private to this class: it leaves
// with the thread (an exit, an exec, a detach or a kill forgets the thread), which is what an
// event of a thread the kernel no longer has must do, and the ranks read the thread beside it.
// Ends are kept here, in the order they happened. An end may wait for a resume: the exit of a
// thread GDB had stopped (all-stop: another thread ran alone), or the end of a process GDB had
// stopped (SIGKILL from outside) are told once GDB resumes that thread or process, as
// gdbserver keeps them; released, they keep their place among the others.
#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
#include <optional>
#include <utility>

#include "tracer/linux/thread.hpp"
#include "tracer/types.hpp"

namespace tracer {

class PendingEvents {
 public:
  // t stopped with ev to report: the newest event.
  void hold(LinuxThread& t, const StopEvent& ev) { t.pending_ = PendingStop{ev, ++seq_}; }
  // The stop t has to report, or nullptr.
  static const StopEvent* stop_of(const LinuxThread& t) { return t.pending_ ? &t.pending_->event : nullptr; }
  static bool has_stop(const LinuxThread& t) { return t.pending_.has_value(); }
  // t's stop is not reported after all (GDB removed the breakpoint it hit meanwhile).
  void drop_stop(LinuxThread& t) { t.pending_.reset(); }
  // Hands t's stop over (it must have one).
  StopEvent take_stop(LinuxThread& t) { return std::exchange(t.pending_, std::nullopt)->event; }

  // When an end may be reported: now, or once GDB resumes its thread or process.
  enum class When { Now, AtResume };
  // A thread exited or a process ended (ThreadExited, Exited, Killed): the newest event.
  void add_exit(const StopEvent& ev, When when = When::Now) {
    exits_.push_back(End{PendingStop{ev, ++seq_}, when == When::AtResume});
  }
  // Ends that may be reported now.
  bool has_exits() const {
    return std::any_of(exits_.begin(), exits_.end(), [](const End& e) { return !e.held; });
  }
  // Ends waiting for a resume (whatever their process).
  bool has_held() const {
    return std::any_of(exits_.begin(), exits_.end(), [](const End& e) { return e.held; });
  }
  // A resume: the held ends `resumes` admits (it is GDB resuming their thread or process) may
  // be reported now, in their place.
  template <class Resumes>
  void release(Resumes&& resumes) {
    for (End& e : exits_) {
      if (e.held && resumes(e.pending.event)) {
        e.held = false;
      }
    }
  }
  // An exec killed pid's other threads: GDB learns it from the exec, not from exits it had not
  // heard yet of threads it had stopped (GDB 16 gives up on a thread it did not resume).
  void drop_held_exits_of(Pid pid) {
    std::erase_if(exits_, [pid](const End& e) {
      return e.held && e.pending.event.pid == pid && e.pending.event.reason == StopReason::ThreadExited;
    });
  }
  // pid was detached or killed, or GDB heard of its end: nothing more of it is reported (its
  // threads' stops go with its threads).
  void drop_process(Pid pid) {
    std::erase_if(exits_, [pid](const End& e) { return e.pending.event.pid == pid; });
  }
  // Every process goes (killed or let go): no end is told.
  void clear() { exits_.clear(); }

  // Among the threads ForEach visits whose stop `rank` admits (a number, lower first; nullopt:
  // not now), the one of lowest rank, the oldest of those; nullptr when none.
  template <class ForEach, class Rank>
  static LinuxThread* next_stop(ForEach&& for_each, Rank&& rank) {
    LinuxThread* best = nullptr;
    int best_rank = 0;
    for_each([&](LinuxThread& t) {
      if (!t.pending_) {
        return;
      }
      std::optional<int> r = rank(t);
      if (r && (best == nullptr || *r < best_rank || (*r == best_rank && t.pending_->seq < best->pending_->seq))) {
        best = &t;
        best_rank = *r;
      }
    });
    return best;
  }

  // What to report next: a thread's stop (the best `rank` admits) or the oldest end that may be
  // reported now, which comes first when it is older (ByAge) or only when no stop is left.
  enum class ExitOrder { ByAge, AfterStops };
  struct Next {
    LinuxThread* stop = nullptr;  // this thread's stop
    bool exit = false;            // else the oldest end (neither: nothing to report)
    explicit operator bool() const { return stop != nullptr || exit; }
  };
  template <class ForEach, class Rank>
  Next next(ForEach&& for_each, Rank&& rank, ExitOrder order) const {
    LinuxThread* t = next_stop(for_each, rank);
    const auto end = first_ready();
    const bool exit = end != exits_.end() &&
                      (t == nullptr || (order == ExitOrder::ByAge && end->pending.seq < t->pending_->seq));
    return exit ? Next{nullptr, true} : Next{t, false};
  }
  // Removes what next() chose from the queue and returns it.
  StopEvent take(const Next& n) {
    if (n.exit) {
      auto end = first_ready();
      StopEvent ev = end->pending.event;
      exits_.erase(end);
      return ev;
    }
    return take_stop(*n.stop);
  }

 private:
  struct End {
    PendingStop pending;
    bool held = false;  // until GDB resumes its thread or process
  };
  std::deque<End>::const_iterator first_ready() const {
    return std::find_if(exits_.begin(), exits_.end(), [](const End& e) { return !e.held; });
  }
  std::deque<End>::iterator first_ready() {
    return std::find_if(exits_.begin(), exits_.end(), [](const End& e) { return !e.held; });
  }

  std::uint64_t seq_ = 0;
  std::deque<End> exits_;  // in the order they happened
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
  return !t.gdb.resumed() && PendingEvents::stop_of(t)->reason == StopReason::Signal ? std::optional<int>(0) : std::nullopt;
}

}  // namespace tracer
