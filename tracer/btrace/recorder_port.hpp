// What the in-process recorder's collector (InprocCollector) asks of the process it records:
// a stopped thread moved into the recorder's code cache (the recorder brought into the process
// first, if need be) and back out to the program's code, the branches it recorded there, and
// what the process's life (a fork, an exec, code GDB wrote, the end of recording) means to the
// recorder. The collector owns its port, one per process. Pure interface: the Linux side does it
// with ptrace and the server's own calls (tracer/linux/process_recorder.hpp); a collector test
// can do it with a fake.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/result.hpp"
#include "tracer/btrace/branch_tracer.hpp"
#include "tracer/types.hpp"

namespace tracer {

// Where a thread stood when it left the cache.
struct RecorderLeft {
  Addr pc = 0;              // its program address now
  bool ran_native = false;  // it ran the program's code natively since it left the cache (not
                            // recorded) rather than standing in the cache
  Addr exited_at = 0;       // the program address it left the cache for (0: it never did)
  bool asked = false;       // it had stopped by the recorder's own request (its translations
                            // stale while other threads may run them): no stop of the program's
};

// What a syscall stop (catch syscall) of a thread in the cache was.
struct RecorderSyscall {
  bool recorders_own = false;        // the recorder's own call (its translator's mmap): never GDB's
  std::optional<RecorderLeft> left;  // moved back to the program's code: where it stands
};

// The branches a thread recorded since the last take, oldest first, and how many before them
// the recorder's ring overwrote unread.
struct RecordedBranches {
  std::vector<BranchSample> samples;
  std::uint64_t lost = 0;
};

class RecorderPort {
 public:
  virtual ~RecorderPort() = default;
  // Moves stopped tid into the cache: it records from where it stands when it runs. Errc::not_yet:
  // the recorder cannot come in yet (after an exec, until the dynamic linker has handed over;
  // a thread stopped inside a system call); another error: it never will. ring_samples: what
  // the thread's ring in the process should hold between two stops (GDB's buffer).
  virtual base::Result<void> enter(Tid tid, std::uint64_t ring_samples) = 0;
  // Where a thread can enter when enter() says not yet: after an exec, the program's entry
  // point (the dynamic linker has loaded and started libc by then). Nothing: not before the
  // next exec.
  virtual std::optional<Addr> comes_in_at() = 0;
  // Moves stopped tid back to the program's code, when it is in the cache.
  virtual base::Result<RecorderLeft> leave(Tid tid) = 0;
  // tid, in the cache, stopped at a system call (the core catches them: no call may run there):
  // moved back to the program's code when `move`, or when it ran natively since it left the
  // cache (so that it enters again at its resume); nothing moves for the recorder's own call.
  virtual base::Result<RecorderSyscall> at_syscall(Tid tid, bool move) = 0;
  virtual bool inside(Tid tid) const = 0;
  virtual base::Result<RecordedBranches> take(Tid tid) = 0;

  // --- the process's life ---------------------------------------------------------------------
  // Why the recorder cannot come into the process of stopped tid (nothing: it may): a 32-bit
  // program, seccomp, an address space limit, the recorder not installed.
  virtual std::optional<std::string> unfit(Tid tid) = 0;
  // The program's memory was written (GDB): translations made before are stale.
  virtual void code_written() = 0;
  // The translations made afresh, if the program's code or the core's int3s changed since they
  // were made and no thread is in the cache, with a call on a stopped thread (else at a later
  // entry). Errc::not_yet: none may make the call now.
  virtual base::Result<void> refresh() = 0;
  // tid is gone.
  virtual void thread_gone(Tid tid) = 0;
  // At a fork, vfork or clone event: `parent`, inside the call in the cache, back in the program's
  // code, and `child` (stopped at birth on the same instruction of its copy of the cache) too.
  // Where the parent stands now; nothing if it was not in the cache there.
  virtual base::Result<std::optional<Addr>> out_at_birth(Tid parent, Tid child) = 0;
  // This port is a fork child's (one of its own memory): it records with its copy of `parent`'s
  // recorder, a port of the same kind.
  virtual void inherit(const RecorderPort& parent) = 0;
  // The process exec'd: the recorder went with the old image; the next entry brings it in anew.
  virtual void exec_happened() = 0;
  // Recording ended, or the process is let go (its threads stopped): every thread out of the
  // cache, the recorder unloaded, with a call on a stopped thread; a fork child's dormant copy of
  // its parent's too.
  virtual base::Result<void> unload() = 0;
};

}  // namespace tracer
