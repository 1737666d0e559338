// What a process the server starts (the program, Valgrind, vgdb) must not inherit from it.
// Only async-signal-safe calls: for the child between fork and exec.
#pragma once

#include <signal.h>

#include <string>
#include <vector>

namespace tracer {

// The server blocks SIGCHLD (its signalfd) and ignores SIGPIPE; exec keeps both. A program
// starts with nothing blocked and SIGPIPE at its default, as from a shell.
inline void reset_signal_state_for_exec() {
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  ::signal(SIGPIPE, SIG_DFL);
}

// argv for execv from words (which must outlive it), null-terminated.
inline std::vector<char*> exec_argv(std::vector<std::string>& words) {
  std::vector<char*> argv;
  for (auto& w : words) {
    argv.push_back(w.data());
  }
  argv.push_back(nullptr);
  return argv;
}

}  // namespace tracer
