// What the fault cases share: the pid the server started, the port it listens on, a process's
// descriptors and resident memory, and the executable code of a process as bytes.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "test/e2e/process.hpp"

namespace faults {

// The pid of the program a server started ("Process ... created; pid = N"); waits up to 5 s.
pid_t started_pid(e2e::Child& server);
// Open descriptors of pid (entries of /proc/PID/fd).
int open_fds(pid_t pid);
// VmRSS of pid in KiB, or -1.
long resident_kib(pid_t pid);
// The first executable mapping of pid's main program: its start and its bytes.
struct Code {
  unsigned long start = 0;
  std::vector<unsigned char> bytes;
};
std::optional<Code> program_code(pid_t pid);
// True when pid runs with AddressSanitizer (libasan mapped): its freed memory sits in a
// quarantine, so resident memory says nothing about leaks there (LeakSanitizer does).
bool sanitized(pid_t pid);
// True once pid is gone or a zombie.
bool process_gone(pid_t pid);

}  // namespace faults
