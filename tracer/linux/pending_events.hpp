// The all-stop pending-event queue: each thread holds at most one stop not reported yet,
// stamped with the order it happened in. A resume reports the oldest one among the threads
// it resumed; the others wait for the next resume (never lost, never reported twice).
#pragma once

#include <cstdint>

namespace tracer {

// Threads: a map of Tid -> thread with `resumed`, `pending` (optional) and `pending_seq`.
// Returns the thread whose pending event is next, or nullptr.
template <class Threads>
auto* oldest_pending(Threads& threads) {
  decltype(&threads.begin()->second) best = nullptr;
  for (auto& [tid, t] : threads) {
    if (t.resumed && t.pending && (best == nullptr || t.pending_seq < best->pending_seq)) {
      best = &t;
    }
  }
  return best;
}

}  // namespace tracer
