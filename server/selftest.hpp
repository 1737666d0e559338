// `hindsight --selftest[=FILTER]`: the server checks its own parts on this machine, as
// gdbserver's --selftest does, and prints "Ran N unit tests, M failed".
#pragma once

#include <string>

namespace server {

// Runs the checks whose name contains filter (all when empty); the exit status: 0 when all passed.
int run_selftests(const std::string& filter);

}  // namespace server
