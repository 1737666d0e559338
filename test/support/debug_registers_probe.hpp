// Whether this machine delivers hardware debug-register traps to a ptrace'd process. Some
// virtual machines accept DR0-DR7 writes but never fire them (GNU gdbserver fails there the
// same way); tests of Z1-Z4 are skipped there, with the reason.
#pragma once

#include <signal.h>
#include <stddef.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

namespace test_support {

// Empty when a write watchpoint fires; otherwise why not.
inline std::string debug_register_problem() {
  static volatile long target_word = 0;
  pid_t child = ::fork();
  if (child == 0) {
    ::ptrace(PTRACE_TRACEME, 0, nullptr, nullptr);
    ::raise(SIGSTOP);
    target_word = 1;
    ::_exit(0);
  }
  int st = 0;
  ::waitpid(child, &st, 0);
  auto dr = [](int i) { return offsetof(struct user, u_debugreg) + static_cast<std::size_t>(i) * sizeof(long); };
  const auto addr = reinterpret_cast<long>(&target_word);
  const long dr7 = 1 | (1L << 16) | (3L << 18);  // L0, write, 8 bytes
  std::string problem;
  if (::ptrace(PTRACE_POKEUSER, child, dr(0), addr) != 0 || ::ptrace(PTRACE_POKEUSER, child, dr(7), dr7) != 0) {
    problem = "the kernel refuses debug register writes";
  } else {
    ::ptrace(PTRACE_CONT, child, nullptr, nullptr);
    ::waitpid(child, &st, 0);
    if (!(WIFSTOPPED(st) && WSTOPSIG(st) == SIGTRAP)) {
      problem = "this machine (a VM) accepts debug registers but never fires them; hardware "
                "breakpoints and watchpoints cannot work here";
    }
  }
  ::kill(child, SIGKILL);
  ::waitpid(child, &st, 0);
  return problem;
}

}  // namespace test_support

// Skips the test case when hardware watchpoints cannot fire on this machine.
#define REQUIRE_DEBUG_REGISTERS()                                                   \
  do {                                                                             \
    static const std::string hs_dr_problem = ::test_support::debug_register_problem(); \
    if (!hs_dr_problem.empty()) {                                                  \
      HS_SKIP(hs_dr_problem);                                                      \
    }                                                                              \
  } while (0)
