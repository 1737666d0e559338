// Libraries loaded and unloaded, for the event log: a breakpoint where the dynamic linker
// announces each change (_dl_debug_state, the function GDB's solib code watches too), and a
// comparison of the link map before and after.
#pragma once

#include <functional>
#include <optional>
#include <set>
#include <string>

#include "tracer/event_log.hpp"
#include "tracer/target.hpp"

namespace server::triage {

class LibraryWatch {
 public:
  // Plants the breakpoint in pid's dynamic linker (nothing for a static program).
  void start(tracer::Target& target, tracer::Pid pid, tracer::EventLog& log);
  // True when the stop is the watch's own breakpoint (the libraries were compared and the
  // changes logged): the thread just goes on.
  bool handle(tracer::Target& target, const tracer::StopEvent& ev, tracer::EventLog& log);
  // Moves the thread past the breakpoint. wait() gives the next stop; a stop other than the
  // end of that step (something else happened first) is returned for the caller to handle.
  std::optional<tracer::StopEvent> step_over(tracer::Target& target, const tracer::StopEvent& ev,
                                             const std::function<std::optional<tracer::StopEvent>()>& wait);

 private:
  void compare(tracer::Target& target, tracer::Pid pid, tracer::EventLog& log);

  std::optional<tracer::Addr> breakpoint_;
  std::set<std::string> loaded_;
};

}  // namespace server::triage
