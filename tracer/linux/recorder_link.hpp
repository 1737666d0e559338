// The server's side of the in-process branch recorder (issue 43): maps libhindsight-recorder.so
// into a stopped program by its private loader (recorder_loader.hpp), moves a stopped thread
// into the recorder's code cache and back out to the program's code, reads its ring, and takes
// the image out again. One per process. Every call here needs the process's threads stopped.
#pragma once

#include <initializer_list>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/result.hpp"
#include "tracer/btrace/branch_tracer.hpp"
#include "tracer/inprocess/recorder/recorder_api.h"
#include "tracer/inprocess/recorder/recorder_ring.h"
#include "tracer/linux/kernel.hpp"
#include "tracer/linux/recorder_loader.hpp"
#include "tracer/linux/recorder_memory.hpp"
#include "tracer/linux/recorder_rseq.hpp"
#include "tracer/linux/server_lifeline.hpp"
#include "tracer/linux/shared_region.hpp"
#include "tracer/linux/signals_held_back.hpp"
#include "tracer/types.hpp"

namespace tracer {


// Where a thread stood when it left the cache.
struct LeftAt {
  Addr pc = 0;              // its program address now
  bool ran_native = false;  // it was running the program's code natively (a way out of the cache
                            // or a run the recorder never saw), not in the cache
  Addr exited_at = 0;       // where it last left the cache for native code (0: never)
  unsigned steps = 0;       // single-steps it took to a safe point of the cache
  bool trapped = false;     // it had stopped at the leave trap no leave of the server's ran it to
                            // (the recorder's own request: translations stale, see maps_gate)
};

// What take() found new in a thread's ring.
struct TakenSamples {
  std::vector<BranchSample> samples;  // oldest first
  std::uint64_t lost = 0;                   // written before them and overwritten unread
};

class RecorderLink {
 public:
  // Maps the recorder image at `image_path` into pid (its private loader, recorder_loader.hpp)
  // with system calls on `caller`, and sets the recorder up.
  static base::Result<RecorderLink> load(Kernel& kernel, Pid pid, Tid caller, const std::string& image_path);

  // The link of a fork child of this process to its copy of the recorder: the same library at
  // the same addresses, none of this process's threads. settle_in_fork_child() before its first
  // entry.
  RecorderLink for_fork_child(Pid child) const;
  // In a fork child, on its one thread: no translator (a copy of the lock a thread of the parent
  // may have held) and no translations (the copy may be half made). Then it records as here.
  base::Result<void> settle_in_fork_child(Tid caller);

  // Moves tid into the cache (its block made on its first entry): it records from where it is
  // stopped. A syscall it was stopped in restarts there, as it would have. A thread that a
  // thread in the cache cloned (its %gs is its parent's block) is first moved out as its
  // parent's double.
  // ring_samples: what its ring should hold at least (its block's, made at its first entry).
  base::Result<void> enter(Tid tid, std::uint64_t ring_samples = HS_RECORDER_RING_MIN_CAPACITY);
  // Moves each of tids back to the program's code, with its %gs as before: one at a safe point
  // at once, those in the dispatcher run on to its leave trap together (one may be waiting for
  // the translation lock another holds), the others stepped to a safe point. Signals that came
  // meanwhile are held and returned.
  // Errc::not_yet: one waits for the translation lock a thread outside tids holds (it can leave
  // once that one has left); it, and those of tids not out yet, stay in the cache.
  base::Result<std::vector<HeldSignal>> leave(const std::vector<Tid>& tids);
  // tid, in the cache and stopped inside a system call it made there (a fork's event: the child
  // stands at the same place of its copy), moved to the program address after the call, which
  // the marker after the call's copy holds (recorder_api.h), its own %gs base back. Where it
  // stood in the cache and where it went; nothing when it was not at such a place.
  struct MovedOut {
    Addr from = 0, to = 0;
    std::uint64_t gs_base = 0;
  };
  base::Result<std::optional<MovedOut>> leave_from_syscall(Tid tid);
  // tid, in the cache, at a syscall stop (catch syscall: PTRACE_SYSCALL). Whose call it is: the
  // program's (made in the cache, or natively since it left for native code) or the
  // recorder's own (the translator's mmap, say: never GDB's to see). A program's call moves it
  // back to the program's code when `move` (no call: none may run there), or always after a
  // native run (so that it enters again at its resume); left_at() says where.
  enum class SyscallOf { program, recorder };
  base::Result<SyscallOf> at_syscall(Tid tid, bool move);
  // Whether the threads stop at system calls (catch syscall): then the recorder has a call that
  // may change the mappings made natively, where its stop shows the program's code.
  base::Result<void> set_syscalls_caught(bool caught);
  // Where tid stood when it last left (after leave()).
  LeftAt left_at(Tid tid) const {
    auto it = threads_.find(tid);
    return it == threads_.end() ? LeftAt{} : it->second.left;
  }
  // What tid's ring holds, oldest first, and how many samples were ever written. Its block
  // and ring are mapped here too where the recorder could share them (a memfd): read with no
  // system call, and still after the thread, or the whole process, is gone (SIGKILL).
  base::Result<std::vector<BranchSample>> samples(Tid tid, std::uint64_t* written = nullptr);
  // The samples tid wrote since the last take.
  base::Result<TakenSamples> take(Tid tid);
  // Forgets every translation (no thread may be in the cache): the program's code changed.
  base::Result<void> flush(Tid caller);
  // Whether the recorder found its translations stale while threads could be running them (a
  // system call unmapped or reprotected translated code): flush before the next entry.
  bool cache_stale();
  // The thread is gone (its ring taken): its block is retired, for the recorder to make anew for
  // the next thread (written in the program's memory, no call; the server's mapping kept).
  void forget(Tid tid);
  // Unmaps the recorder's memory and its image (no thread may be in the cache).
  base::Result<void> unload(Tid caller);

  // The signals the calls made since the last leave() or take_held() held (they came while the
  // call ran), to be sent again.
  std::vector<HeldSignal> take_held() { return std::exchange(held_, {}); }
  // tid is in the cache (entered, not left).
  bool recording(Tid tid) const {
    auto it = threads_.find(tid);
    return it != threads_.end() && it->second.inside;
  }
  bool any_inside() const;
  bool knows(Tid tid) const { return threads_.contains(tid); }

 private:
  struct Api {  // the recorder's functions (recorder_api.h)
    Addr new_thread = 0, flush = 0, shutdown = 0, settle_fork_child = 0;
  };
  struct CacheView {  // what tells a cache address's program address (recorder_api.h)
    Addr regions = 0, region_count = 0;
  };
  struct ThreadLink {
    Addr block = 0;
    Addr info = 0;  // its hs_recorder_thread_info
    Addr resume_slot = 0, exit_slot = 0, ring = 0;  // in its block
    Addr leave_slots = 0;  // target, target_app, leave_request (recorder_api.h)
    Addr private_stack_top = 0;
    Addr app_gs_slot = 0;  // in its block: the program's %gs base while it runs in the cache
    Addr rseq_cs_kept_slot = 0;  // in its block: the program's rseq_cs word while in a section's copy
    std::uint64_t gs_base = 0;  // the thread's own at its entry
    Addr resume = 0;  // where enter() sent it, as it wrote in its block's resume slot
    // At enter(), an interrupted syscall it rewound to run again, as it stood before (rip, rax,
    // orig_rax): a thread that leaves without having run gets them back, so that the kernel
    // still decides the syscall's fate (EINTR for a signal's handler, a restart otherwise).
    struct Interrupted {
      Addr rip = 0;
      std::uint64_t rax = 0, orig_rax = 0;
    };
    std::optional<Interrupted> rewound;
    bool inside = false;
    std::uint64_t taken = 0;  // samples of its ring taken so far
    LeftAt left;
    std::shared_ptr<const SharedRegion> shared;  // its block and ring, mapped here (or none)
    std::shared_ptr<const LifelineWord> lifeline;  // its block's word on the server's lifeline (or none)
  };
  RecorderLink(Kernel& kernel, Pid pid) : kernel_(&kernel), pid_(pid), memory_(kernel, pid) {}
  // function(args) run on stopped tid, returning to the image's gadget (no fault, no signal).
  // tid's link while it is in the cache, else nullptr.
  ThreadLink* in_cache(Tid tid) {
    auto it = threads_.find(tid);
    return it == threads_.end() || !it->second.inside ? nullptr : &it->second;
  }
  base::Result<std::uint64_t> call(Tid tid, Addr function, std::initializer_list<std::uint64_t> args);
  base::Result<void> make_block(Tid tid, ThreadLink& link, std::uint64_t ring_samples);
  // Whether tid (unknown here) runs on the block of a thread in the cache: a clone made there,
  // which leaves as its parent would (then noted as inside).
  bool note_if_clone(Tid tid, const arch::x86::RawRegisters& regs);
  // Where a thread of the cache stands: moved out already, in the dispatcher (it runs on to the
  // leave trap), or where it must step on to a safe point.
  enum class Way { out, dispatcher, step };
  // tid moved to the program's code if it stands where it can be, else left as it is.
  // stepped: it was single-stepped there (through a pushfq and popfq, maybe).
  base::Result<Way> try_leave(Tid tid, bool stepped);
  // Where in the program a thread of the cache standing at pc, right after a copied syscall, goes
  // on (the marker there says; at the thread entry, its resume slot), or nothing.
  std::optional<Addr> after_syscall(const ThreadLink& link, Addr pc);
  // Where the program would be for a thread stopped at pc, read from the recorder's tables (no
  // call): pc itself outside the cache, the program address at a safe point, 0 where the thread
  // must step on first (the stubs and the private stack are the caller's to tell).
  base::Result<Addr> app_address(Addr pc);
  // Whether pc is in one of the cache's regions (read from the recorder's table).
  base::Result<bool> in_cache(Addr pc);
  // The cache region pc is in, as the recorder describes it now (none: not in the cache).
  base::Result<std::optional<hs_recorder_cache_region>> region_of(Addr pc);
  // The program's %gs base for tid leaving the cache with `regs` (program_gs.hpp): one its
  // native code set (the real base is not its block), else the one the cache kept in the block.
  std::uint64_t program_gs(const ThreadLink& link, const arch::x86::RawRegisters& regs);
  // At a syscall stop of tid's rt_sigreturn in the cache: the frame the kernel restores goes to
  // the thread entry, the interrupted address in the resume slot (the cache's sigreturn
  // sequence). to_program: that address back in the frame (the sigreturn returns there
  // natively), else the cache's way (enter() at such a stop). The program address the
  // sigreturn goes to, either way.
  base::Result<Addr> point_sigreturn_frame(ThreadLink& link, const arch::x86::RawRegisters& regs, bool to_program);
  // Whether tid, in the dispatcher, waits for the translation lock a thread outside `batch` holds.
  bool waits_outside(Tid tid, const std::vector<Tid>& batch);
  base::Result<void> step(Tid tid, std::vector<HeldSignal>& held);
  // tids, in the dispatcher, run on to its leave trap (they may wait for each other's
  // translation lock): no step. Signals that came meanwhile are held.
  base::Result<void> run_to_leave_trap(const std::vector<Tid>& tids, std::vector<HeldSignal>& held);
  // Signals a call held, kept to be handed back.
  void hold(const std::vector<HeldSignal>& signals);

  Kernel* kernel_;
  Pid pid_;
  RecorderMemory memory_;  // its memory in the program, through the regions mapped here where it can
  MappedRecorder image_;    // where the image lies in the program
  Addr return_gadget_ = 0;  // its `syscall` that calls return to (and the server's calls use)
  Api api_;
  CacheView cache_view_;
  Addr entry_ = 0;
  Addr stubs_ = 0;
  Addr translator_slot_ = 0;
  RseqLink rseq_;
  std::map<Tid, ThreadLink> threads_;
  // Blocks of threads gone, by address: the server's mappings of them, for the thread that gets
  // the block next.
  struct Retired {  // a retired block's mappings here, kept for the thread that gets it next
    std::shared_ptr<const SharedRegion> shared;
    std::shared_ptr<const LifelineWord> lifeline;
  };
  std::map<Addr, Retired> retired_;
  std::vector<HeldSignal> held_;  // signals held by the server's calls, not yet handed back
  std::optional<bool> syscalls_caught_;  // as last written to the recorder
};

}  // namespace tracer
