// Each followed process's /proc/PID/maps as last seen, for the report of one that is killed
// without a stop (SIGKILL: by then its maps are gone). Read when the process is noted (its fork,
// its exec) and again as it settles (the dynamic linker maps its libraries after the exec; a
// dlopen comes later): 50 ms, 150 ms and 500 ms after, then every second while it lives.
#pragma once

#include <chrono>
#include <map>
#include <string>

#include "tracer/types.hpp"

namespace server::triage {

class MapsKeeper {
 public:
  using Clock = std::chrono::steady_clock;
  // Reads pid's maps now, and again later.
  void note(tracer::Pid pid, Clock::time_point now = Clock::now());
  // Reads those due again (an empty read, a process gone or a zombie, keeps the last).
  void tend(Clock::time_point now = Clock::now());
  // The maps last seen ("" if none).
  std::string of(tracer::Pid pid) const;
  void forget(tracer::Pid pid) { kept_.erase(pid); }

 private:
  struct Kept {
    std::string maps;
    Clock::time_point due;
    int reads = 0;
  };
  std::map<tracer::Pid, Kept> kept_;
};

}  // namespace server::triage
