// SoftStep: the collector that has the core single-step every traced thread and records each
// taken branch (btrace.md §10). SoftStepTracer owns one thread's history ring and the little
// state a step needs: where the step started and what ran last. No ptrace here: the core
// steps and reports each step through the Collector seam.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>

#include "arch/x86/instruction_length.hpp"
#include "tracer/backend.hpp"
#include "tracer/btrace/instruction_cache.hpp"
#include "tracer/btrace/per_thread_collector.hpp"
#include "tracer/btrace/ring_buffer_tracer.hpp"
#include "tracer/types.hpp"

namespace tracer {

class SoftStepTracer final : public BranchTracer {
 public:
  // backend: "step", or "soft" when SoftEmulate uses it (it steps what it does not emulate).
  explicit SoftStepTracer(const BtraceConfig& config,
                          std::string backend = std::string(backend_name(Backend::Step)))
      : ring_(std::move(backend), config) {}

  // About to PTRACE_SINGLESTEP from `from`, delivering sig (0: none).
  void begin_step(Addr from, int sig) {
    from_ = from;
    step_signal_ = sig;
  }
  Addr from() const { return from_; }
  int step_signal() const { return step_signal_; }

  // The instruction at from() ran and the thread is now at `to`: records the taken branch, if
  // it was one. Returns whether it was.
  bool stepped(const arch::x86::InstructionInfo& insn, Addr to);
  // The step delivered a signal and the thread stands at its handler's entry; nothing ran.
  // Records (last instruction that ran, handler) so that the blocks stay sequential.
  void entered_handler(Addr handler);

  // SoftEmulate: the server performed the branch at `from` (length bytes); the thread is at `to`.
  // Recorded when `to` is not the next instruction, as a step of it would be.
  void performed(Addr from, Addr to, std::uint8_t length);
  // The core ran the system call at from() (length bytes) in place of the step (it catches
  // system calls): the thread stands at the call's entry, past it.
  void entered_syscall(std::uint8_t length) {
    last_ran_ = from_;
    last_was_branch_ = false;
    syscall_ = Syscall{from_, length};
  }
  // ... and at its return, at `to`: a branch from it where the call does not come back after
  // itself (rt_sigreturn), as a step of it would record.
  void syscall_returned(Addr to);
  // The thread ran straight-line code natively up to and including the instruction at `last`.
  void ran_through(Addr last) {
    last_ran_ = last;
    last_was_branch_ = false;
  }
  // A taken branch the thread made out of the collector's sight (the in-process recorder's),
  // with no clock reading of its own: read_clock() after a batch dates it.
  void took(const BranchSample& branch) {
    if (recording_) {
      ring_.record_unclocked(branch);
    }
    last_ran_ = branch.from;
    last_was_branch_ = true;
  }
  void read_clock() { ring_.read_clock(); }
  // Branches the in-process recorder made and lost before they were taken (its ring went round).
  void missed(std::uint64_t count) { ring_.missed(count); }
  // The path from the last record is unknown; the thread was found again at `found_at`.
  void lost_track(Addr found_at);
  // SoftEmulate's scope: while off, steps and performed branches keep the bookkeeping but
  // record nothing (the thread is in code out of scope).
  void set_recording(bool on) { recording_ = on; }
  bool recording() const { return recording_; }
  // Back in scope at `at` from code out of scope entered at `entered`: recorded as the branch
  // entered -> at (the callee's first instruction, then its return), recording on again.
  void came_back(Addr entered, Addr at) {
    recording_ = true;
    ring_.record(BranchSample{entered, at});
    last_ran_ = entered;
    last_was_branch_ = true;
  }

  base::Result<BtraceData> read(BtraceRead kind, Addr current_pc) override {
    return ring_.read(kind, current_pc);
  }
  BtraceConfig conf() const override { return ring_.conf(); }
  BtraceStats stats() const override {
    BtraceStats s = ring_.stats();
    s.emulated = emulated_;
    s.stepped = stepped_;
    return s;
  }
  void new_reader() override { ring_.new_reader(); }
  base::Result<TimedBlocks> timed_history(Addr current_pc, std::uint64_t stopped_ns) override {
    return ring_.timed_history(current_pc, stopped_ns);
  }
  // Every sample kept, oldest first (tests compare collectors with it).
  std::vector<BranchSample> samples() const { return ring_.ring().samples_since(0); }

 private:
  RingBufferTracer ring_;
  std::uint64_t emulated_ = 0;
  std::uint64_t stepped_ = 0;
  Addr from_ = 0;
  int step_signal_ = 0;
  struct Syscall {
    Addr at = 0;
    std::uint8_t length = 0;
  };
  std::optional<Syscall> syscall_;  // entered_syscall's, until its return
  std::optional<Addr> last_ran_;  // the last instruction that ran
  bool last_was_branch_ = false;  // ... and it branched to where the thread is now
  bool recording_ = true;
};

// Single-steps every traced thread. SoftEmulate builds on it: what it does not emulate, it
// steps and records the same way.
class SoftStepCollector : public PerThreadCollector {
 public:
  std::string_view backend() const override { return backend_name(Backend::Step); }
  bool wants_step(Tid tid, Addr pc, int sig, bool core_steps, CollectorHost& host) override;
  StepVerdict stepped(Tid tid, Addr pc, CollectorHost& host) override;
  void stepped_over(Tid tid, Addr pc, CollectorHost& host) override;
  // A step asked at a system call's instruction runs to the call's entry stop instead (the core
  // catches them): recorded as the step would have been, the call's return too.
  bool syscall_stopped(Tid tid, bool entry, bool caught, CollectorHost& host) override;
  void code_changed() override { insn_cache_.clear(); }

 protected:
  base::Result<std::unique_ptr<BranchTracer>> make(Tid tid, const BtraceConfig& config) override;
  SoftStepTracer* stepper(Tid tid) const { return static_cast<SoftStepTracer*>(live(tid)); }
  const arch::x86::InstructionInfo* decode_at(Addr pc, CollectorHost& host);
  // What the finished step did, into the ring; false when the trap was not the step's.
  bool record(Tid tid, SoftStepTracer& s, Addr to, CollectorHost& host);
  // A step delivered a signal and tid now stands at its handler's first instruction.
  virtual void handler_entered(Tid tid, CollectorHost& host) {
    (void)tid;
    (void)host;
  }
  // The instruction a finished step ran (nullptr when it could not be decoded).
  virtual void step_done(Tid tid, const arch::x86::InstructionInfo* insn) {
    (void)tid;
    (void)insn;
  }

 private:
  InstructionCache insn_cache_;
};

// --btrace=step: the collector (it takes no scope).
base::Result<std::unique_ptr<Collector>> make_soft_step_collector(const CollectorRequest& request);

}  // namespace tracer
