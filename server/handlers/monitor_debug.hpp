// `monitor set debug ...` as gdbserver 15 and later take it: `on|off|1|0` for the general
// switch, `COMPONENT on|off|1|0` for one of all, threads, remote, event-loop; their messages
// and their complaints, word for word.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace server {

// Switches the server's logs as `set debug ARGS` (ARGS: what follows "set debug ") asks. The
// line to show: what was done, or why nothing was (then `ok` is false).
struct MonitorDebugResult {
  bool ok = false;
  std::string message;
};
MonitorDebugResult set_debug_components(std::string_view args);

// gdbserver 15's `monitor help` lines for its debug commands.
std::vector<std::string> debug_components_help();

}  // namespace server
