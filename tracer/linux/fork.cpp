// A traced process forks: the child is traced from birth (PTRACE_O_TRACEFORK) so that none of
// our int3s survive in it. GDB follows the parent (we announce no fork events), so the child
// gets the original bytes back and is detached, as gdbserver does for a GDB without fork-events.
#include <sys/wait.h>

#include <cerrno>

#include "base/log.hpp"
#include "tracer/linux/linux_target.hpp"
#include "tracer/linux/memory.hpp"
#include "tracer/linux/ptrace_calls.hpp"

namespace tracer {

void LinuxTarget::release_fork_child(Pid child, bool shares_memory) {
  if (stopped_fork_children_.erase(child) == 0) {
    // Its first stop is on its way: take it here, before the wait loop could mistake it.
    int st = 0;
    while (::waitpid(child, &st, __WALL) < 0 && errno == EINTR) {
    }
  }
  // A vfork child shares the parent's memory: removing the int3s would remove them for the
  // parent too. It execs or exits at once; leave them.
  if (!shares_memory && !breakpoints_.empty()) {
    ProcessMemory memory;
    if (memory.open(child)) {
      for (const auto& [addr, site] : breakpoints_.sites()) {
        if (auto ok = memory.write(addr, Bytes{site.original}); !ok) {
          base::logf(base::LogCat::ptrace, "fork child {}: restoring {:#x} failed: {}", child, addr,
                     ok.error().message());
        }
      }
    }
  }
  base::logf(base::LogCat::ptrace, "fork child {} released", child);
  (void)pt::detach(child, 0);
}

}  // namespace tracer
