// One process's side of the in-process recorder (the RecorderPort its InprocCollector uses):
// the recorder brought in at the first thread's entry (RecorderLink::load: the server's private
// loader), its translations dropped before a thread enters when the core's int3s or the
// program's code changed since they were made, signals a leave held sent again, and the
// recorder taken out when recording ends. Owned by the Process (Process::recorder).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "tracer/btrace/recorder_port.hpp"
#include "tracer/linux/recorder_link.hpp"

namespace tracer {

struct Process;

// After an exec: where the dynamic linker hands over to the program.
struct RecorderHandover {
  Addr entry = 0;      // the program's entry (0: handed over, or no dynamic linker to wait for)
  std::string linker;  // the dynamic linker's file, whose code runs until then
};

class ProcessRecorder final : public RecorderPort {
 public:
  ProcessRecorder(Process& p, std::string library) : p_(p), library_(std::move(library)) {}

  base::Result<void> enter(Tid tid, std::uint64_t ring_samples) override;
  std::optional<Addr> comes_in_at() override;
  base::Result<RecorderLeft> leave(Tid tid) override;
  base::Result<RecorderSyscall> at_syscall(Tid tid, bool move) override;
  // (A thread the link does not know may be a clone made in the cache, on its parent's block.)
  bool inside(Tid tid) const override { return link_ && (link_->recording(tid) || !link_->knows(tid)); }
  base::Result<RecordedBranches> take(Tid tid) override;

  // GDB wrote the program's memory: translations made before are stale.
  void code_written() { code_written_ = true; }
  // Forgets the translations, with a call on stopped `caller`, if the program's code or the
  // core's int3s changed since they were made and no thread is in the cache (else at a later
  // entry). Errc::not_yet: no call may run on caller now.
  base::Result<void> flush_if_stale(Tid caller);
  void thread_gone(Tid tid) {
    if (link_) {
      link_->forget(tid);
    }
  }
  // At a fork, vfork or clone event: `parent`, inside the call in the cache, back in the program's
  // code, and `child` (stopped at birth on the same instruction of its copy of the cache, of the
  // same memory after vfork, or of the cache itself on its parent's block) too, with the
  // program's %gs base: a fork child runs natively, never in its parent's recorder; a new thread
  // enters with a block of its own when it first resumes. Where the parent stands now; nothing
  // if it was not in the cache there.
  base::Result<std::optional<Addr>> out_at_birth(Tid parent, Tid child);
  // A fork child's, which records with its copy of the parent's recorder, if the parent has one in.
  void inherit(const ProcessRecorder& parent);
  // Recording ended, or the process is let go: every thread out (they are, at a stop), the
  // recorder unloaded on caller; a fork child's dormant copy of its parent's too.
  base::Result<void> unload(Tid caller);

 private:
  std::vector<Addr> int3_sites() const;
  // Right after an exec the dynamic linker runs first: whether it has yet to hand over to the
  // program (asked once, at the first entry), and whether tid stands past it now.
  bool handover_ahead();
  bool handed_over(Tid tid);
  void send_again(const std::vector<HeldSignal>& signals);

  Process& p_;
  std::string library_;
  std::optional<RecorderLink> link_;
  std::optional<RecorderLink> inherited_;  // a fork child's, until its first entry settles it
  std::optional<base::Error> load_failed_;  // once: every later entry would fail the same way
  std::vector<Addr> translated_with_;       // the core's int3s when the translations began
  bool code_written_ = false;
  std::optional<RecorderHandover> handover_;
};

}  // namespace tracer
