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
#include "tracer/linux/code_view.hpp"
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

  std::optional<std::string> unfit(Tid tid) override;
  void code_written() override { code_written_ = true; }
  base::Result<void> refresh() override;
  void thread_gone(Tid tid) override {
    if (link_) {
      link_->forget(tid);
    }
  }
  // (A fork child runs natively, never in its parent's recorder; a new thread enters with a
  // block of its own when it first resumes: the child is moved with the program's %gs base.)
  base::Result<std::optional<Addr>> out_at_birth(Tid parent, Tid child) override;
  void inherit(const RecorderPort& parent) override;
  void exec_happened() override;
  base::Result<void> unload() override;

 private:
  std::vector<Addr> int3_sites() const;
  // A stopped thread of the process to make the recorder's calls on (one where a call may run,
  // if any); 0: none.
  Tid caller() const;
  // refresh() on stopped caller.
  base::Result<void> flush_if_stale(Tid caller);
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

// LinuxTarget's way to link each process it records with --btrace=inproc to `library` (the
// recorder's image, libhindsight-recorder.so).
RecorderPortMaker recorder_port_maker(std::string library);

}  // namespace tracer
