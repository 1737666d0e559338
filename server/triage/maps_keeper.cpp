#include "server/triage/maps_keeper.hpp"

#include "server/triage/mapped_files.hpp"

namespace server::triage {
namespace {

using namespace std::chrono_literals;

// When the read after `reads` reads comes, from the one before.
MapsKeeper::Clock::duration next_read(int reads) {
  switch (reads) {
    case 1: return 50ms;
    case 2: return 100ms;
    case 3: return 350ms;
    default: return 1s;
  }
}

}  // namespace

void MapsKeeper::note(tracer::Pid pid, Clock::time_point now) {
  Kept& k = kept_[pid];
  k.reads = 0;
  k.due = now;
  tend(now);
}

void MapsKeeper::tend(Clock::time_point now) {
  for (auto& [pid, k] : kept_) {
    if (now < k.due) {
      continue;
    }
    if (std::string maps = read_maps(pid); !maps.empty()) {
      k.maps = std::move(maps);
    }
    ++k.reads;
    k.due = now + next_read(k.reads);
  }
}

std::string MapsKeeper::of(tracer::Pid pid) const {
  const auto it = kept_.find(pid);
  return it != kept_.end() ? it->second.maps : std::string();
}

}  // namespace server::triage
