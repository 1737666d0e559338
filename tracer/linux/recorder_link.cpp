#include "tracer/linux/recorder_link.hpp"

#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstring>

#include "arch/x86/register_layout.hpp"
#include "base/log.hpp"
#include "tracer/inprocess/recorder/recorder_api.h"
#include "tracer/linux/recorder_loader.hpp"
#include "tracer/linux/remote_syscalls.hpp"
#include "tracer/linux/server_lifeline.hpp"
#include "tracer/linux/procfs.hpp"
#include "tracer/linux/recorder_ring_access.hpp"
#include "tracer/linux/signals_held_back.hpp"
#include "tracer/linux/svr4_libraries.hpp"
#include "tracer/linux/syscall_restart.hpp"
#include "tracer/symbols/symbolizer.hpp"

namespace tracer {
namespace {

namespace gpr = arch::x86;

constexpr int kMaxSteps = 200000;               // to a safe point of the cache at worst
constexpr int kMaxSignalsWhileLeaving = 1000;  // held while a thread runs to the leave trap
// A step out of the cache, or a run to the leave trap, at most: then the thread is stopped
// (SIGSTOP) and the leave fails, rather than the server wait for ever.
constexpr auto kLeaveLimit = std::chrono::seconds(5);

// A thread moved from `pc`, right after a syscall the cache ran, to the program's `to`: its rcx,
// which the syscall set to the cache's address, is the program's as natively (r11 has the flags).
void syscall_return_at(arch::x86::RawRegisters& regs, Addr pc, Addr to) {
  if (regs.gpr[gpr::kRcx] == pc) {
    regs.gpr[gpr::kRcx] = to;
  }
}

}  // namespace

base::Result<std::uint64_t> RecorderLink::call(Tid tid, Addr function, std::initializer_list<std::uint64_t> args) {
  auto calls = RemoteSyscalls::begin(*kernel_, pid_, tid, return_gadget_);
  if (!calls) {
    return calls.error();
  }
  base::Result<std::uint64_t> result = calls->call(function, args, return_gadget_);
  auto ended = calls->end();
  hold(calls->take_held());
  if (result && !ended) {
    return ended.error();
  }
  return result;
}

base::Result<RecorderLink> RecorderLink::load(Kernel& kernel, Pid pid, Tid caller, const std::string& image_path) {
  auto objects = read_recorder_objects(image_path);
  if (!objects) {
    return objects.error();
  }
  auto at = find_syscall_instruction(kernel, pid);
  if (!at) {
    return at.error();
  }
  auto calls = RemoteSyscalls::begin(kernel, pid, caller, *at);
  if (!calls) {
    return calls.error();
  }
  RecorderLink link(kernel, pid);
  auto finish = [&](base::Result<void> outcome) -> base::Result<RecorderLink> {
    auto ended = calls->end();
    link.hold(calls->take_held());
    if (!outcome) {
      send_again(kernel, pid, link.take_held());  // (no link to hand them back with)
      return outcome.error();
    }
    if (!ended) {
      return ended.error();
    }
    return std::move(link);
  };
  auto mapped = map_recorder(*calls, kernel, pid, *objects);
  if (!mapped) {
    return finish(mapped.error());
  }
  link.image_ = *mapped;
  // Not the recorder this server speaks to: unmapped again, the program as it was.
  auto refuse = [&](base::Error error) -> base::Result<RecorderLink> {
    (void)calls->run(SYS_munmap, {link.image_.base, link.image_.span});
    return finish(std::move(error));
  };
  auto symbol = [&](const char* name) -> Addr {
    auto it = link.image_.exports.find(name);
    return it == link.image_.exports.end() ? 0 : it->second;
  };
  const Addr setup = symbol("hs_recorder_setup");
  link.return_gadget_ = symbol("hs_recorder_return_gadget");
  if (setup == 0 || link.return_gadget_ == 0) {
    return refuse(base::make_error(base::Errc::unsupported,
                                   image_path + " has no hs_recorder_setup: not a recorder of this server's version"));
  }
  // One call sets the recorder up; the rest is read from the program's memory.
  auto info_at = calls->call(setup, {}, link.return_gadget_);
  if (!info_at) {
    return refuse(info_at.error());
  }
  hs_recorder_process_info info{};
  if (auto r = link.memory_.read_struct(*info_at, info); !r) {
    return refuse(r.error());
  }
  if (info.abi_version != HS_RECORDER_ABI_VERSION) {
    return refuse(base::make_error(base::Errc::unsupported, image_path + " is of another version than this server"));
  }
  if (info.ready != 1) {
    return refuse(base::make_error(base::Errc::failed, "the recorder could not map its memory in the program"));
  }
  link.api_ = {info.new_thread, info.flush, info.shutdown, info.settle_fork_child};
  link.cache_view_ = {info.cache_regions, info.cache_region_count};
  link.entry_ = info.thread_entry;
  link.stubs_ = info.stubs;
  link.translator_slot_ = info.translator_slot;
  if (auto r = link.rseq_.describe(kernel, caller, info, link.memory_); !r) {
    base::logf(base::LogCat::ptrace, "rseq sections are not protected in the cache: {}", r.error().message());
  }
  return finish(base::success());
}

base::Result<void> RecorderLink::make_block(Tid tid, ThreadLink& link, std::uint64_t ring_samples) {
  auto at = call(tid, api_.new_thread, {ring_samples});
  if (!at) {
    return at.error();
  }
  if (*at == 0) {
    return base::make_error(base::Errc::exhausted, "the recorder has no thread block left");
  }
  hs_recorder_thread_info info{};
  if (auto r = memory_.read_struct(*at, info); !r) {
    return r;
  }
  link.block = info.block;
  link.info = *at;
  link.resume_slot = info.resume_slot;
  link.exit_slot = info.exit_slot;
  link.ring = info.ring;
  link.private_stack_top = info.private_stack_top;
  link.leave_slots = info.leave_slots;
  link.app_gs_slot = info.app_gs_slot;
  link.rseq_cs_kept_slot = info.rseq_cs_kept_slot;
  if (auto kept = retired_.find(info.block); kept != retired_.end()) {
    link.shared = std::move(kept->second.shared);  // (a retired block made anew: mapped here already)
    link.lifeline = std::move(kept->second.lifeline);
    retired_.erase(kept);
  } else if (info.shared_fd >= 0) {
    // Mapped here while the program still holds the descriptor: it closes it at the thread's
    // first run in the cache.
    const int fd = static_cast<int>(info.shared_fd);
    auto shared = SharedRegion::map(pid_, fd, info.block, info.shared_bytes);
    if (shared) {
      link.shared = std::move(*shared);
      memory_.map_here(link.shared);
    } else {
      base::logf(base::LogCat::ptrace, "thread {}: its ring is read through ptrace: {}", tid, shared.error().message());
    }
    auto lifeline = LifelineWord::watch(pid_, fd, info.block, info.lifeline_slot);
    if (lifeline) {
      link.lifeline = std::move(*lifeline);
    } else {
      base::logf(base::LogCat::ptrace, "thread {}: no lifeline (the cache will not see the server die): {}", tid,
                 lifeline.error().message());
    }
  }
  return base::success();
}

void RecorderLink::hold(const std::vector<HeldSignal>& signals) {
  held_.insert(held_.end(), signals.begin(), signals.end());
}

void RecorderLink::forget(Tid tid) {
  auto it = threads_.find(tid);
  if (it == threads_.end()) {
    return;
  }
  const ThreadLink link = std::move(it->second);
  threads_.erase(it);
  const bool own_block = link.block != 0 && link.info != 0 &&
                         std::none_of(threads_.begin(), threads_.end(),
                                      [&](const auto& other) { return other.second.block == link.block; });
  if (!own_block) {
    return;  // (a clone made in the cache ran on its parent's block)
  }
  if (memory_.write_word(link.info + offsetof(hs_recorder_thread_info, retired), 1)) {
    retired_[link.block] = {link.shared, link.lifeline};
  }
}

// A thread cloned in the cache runs on its parent's block: it leaves as its parent would, with
// the %gs its parent had before it entered.
bool RecorderLink::note_if_clone(Tid tid, const arch::x86::RawRegisters& regs) {
  for (const auto& [other, link] : threads_) {
    if (link.block != 0 && regs.gpr[gpr::kGsBase] == link.block) {
      ThreadLink child;
      child.gs_base = program_gs(link, regs);
      child.inside = true;
      threads_[tid] = child;
      return true;
    }
  }
  return false;
}

std::uint64_t RecorderLink::program_gs(const ThreadLink& link, const arch::x86::RawRegisters& regs) {
  if (link.block == 0 || link.app_gs_slot == 0) {
    return link.gs_base;  // (a clone made in the cache: its parent's, as it was then)
  }
  if (regs.gpr[gpr::kGsBase] != link.block) {
    return regs.gpr[gpr::kGsBase];  // set in native code, or by the way out to it
  }
  auto kept = memory_.read_word(link.app_gs_slot);
  return kept ? *kept : link.gs_base;
}

bool RecorderLink::cache_stale() {
  auto word = translator_slot_ != 0 ? memory_.read_word(translator_slot_ + 8) : base::Result<std::uint64_t>(0);
  return word && *word != 0;
}

bool RecorderLink::any_inside() const {
  return std::any_of(threads_.begin(), threads_.end(), [](const auto& t) { return t.second.inside; });
}

base::Result<void> RecorderLink::enter(Tid tid, std::uint64_t ring_samples) {
  if (recording(tid)) {
    return base::success();
  }
  arch::x86::RawRegisters regs;
  if (auto r = kernel_->read_gprs(tid, regs); !r) {
    return r;
  }
  if (!threads_.contains(tid) && note_if_clone(tid, regs)) {
    auto held = leave({tid});
    if (!held) {
      threads_.erase(tid);
      return held.error();
    }
    held_.insert(held_.end(), held->begin(), held->end());
  }
  ThreadLink& link = threads_[tid];
  if (link.block == 0) {
    if (auto r = make_block(tid, link, ring_samples); !r) {
      threads_.erase(tid);
      return r;
    }
  }
  if (auto r = kernel_->read_gprs(tid, regs); !r) {
    return r;
  }
  link.rewound.reset();
  // At a syscall's entry stop (catch syscall) the call is still to run: the kernel makes it and
  // returns to the thread entry, bound for the program address after it.
  bool at_entry = false;
  if (static_cast<std::int64_t>(regs.gpr[gpr::kRax]) == -ENOSYS &&
      static_cast<std::int64_t>(regs.gpr[gpr::kOrigRax]) >= 0) {
    auto stop = kernel_->syscall_stop(tid);
    at_entry = stop && stop->entry;
  }
  if (at_entry && regs.gpr[gpr::kOrigRax] == SYS_rt_sigreturn) {
    // It returns where its frame says, which must be the thread entry too.
    auto resume = point_sigreturn_frame(link, regs, false);
    if (!resume) {
      return resume.error();
    }
    link.resume = *resume;
    // Its branch, the next thing it does (as the cache's sigreturn records it).
    if (auto r = ring_append(memory_, link.ring, {regs.gpr[gpr::kRip] - 2, *resume}); !r) {
      return r;
    }
  } else {
    if (!at_entry) {
      if (interrupted_syscall(regs)) {
        link.rewound = ThreadLink::Interrupted{regs.gpr[gpr::kRip], regs.gpr[gpr::kRax], regs.gpr[gpr::kOrigRax]};
      }
      restart_syscall_here(regs);
      auto aborted = rseq_.abort_section(memory_, regs);
      if (!aborted) {
        return aborted.error();
      }
      if (*aborted) {
        // (A gap: the section was cut, as the kernel cuts it.)
        if (auto r = ring_append(memory_, link.ring, {0, **aborted}); !r) {
          return r;
        }
      }
    }
    link.resume = regs.gpr[gpr::kRip];
    if (auto w = memory_.write_word(link.resume_slot, regs.gpr[gpr::kRip]); !w) {
      return w;
    }
  }
  if (auto w = memory_.write_word(link.exit_slot, 0); !w) {
    return w;
  }
  link.gs_base = regs.gpr[gpr::kGsBase];
  if (link.app_gs_slot != 0) {
    if (auto w = memory_.write_word(link.app_gs_slot, link.gs_base); !w) {
      return w;
    }
  }
  link.left = LeftAt{};
  regs.gpr[gpr::kGsBase] = link.block;
  regs.gpr[gpr::kRip] = entry_;
  if (auto w = kernel_->write_registers(tid, regs, false); !w) {
    return w;
  }
  link.inside = true;
  return base::success();
}

base::Result<RecorderLink::Way> RecorderLink::try_leave(Tid tid, bool stepped) {
  ThreadLink* in = in_cache(tid);
  if (in == nullptr) {
    return Way::out;
  }
  ThreadLink& link = *in;
  arch::x86::RawRegisters regs;
  if (auto r = kernel_->read_gprs(tid, regs); !r) {
    return r.error();
  }
  const Addr leave_trap = stubs_ + HS_RECORDER_LEAVE_TRAP_OFFSET;
  std::uint64_t app = 0;
  const Addr pc = regs.gpr[gpr::kRip];
  const Addr sp = regs.gpr[gpr::kRsp];
  const bool translating = link.private_stack_top != 0 && sp <= link.private_stack_top &&
                           sp > link.private_stack_top - HS_RECORDER_PRIVATE_STACK_BYTES;
  if (pc == 0) {
    app = 0;  // a jump to 0 faulted there: the program's own address too
  } else if (pc == entry_) {
    // Not run since enter(), or back from a handler's sigreturn: its resume slot says where to.
    auto resume = memory_.read_word(link.resume_slot);
    if (!resume) {
      return resume.error();
    }
    app = *resume;
    if (app == link.resume && link.rewound) {
      // Where it stood, as it stood: its interrupted syscall is the kernel's to restart again.
      app = link.rewound->rip;
      regs.gpr[gpr::kRax] = link.rewound->rax;
      regs.gpr[gpr::kOrigRax] = link.rewound->orig_rax;
    }
  } else if (pc == leave_trap + 1) {
    // Stopped by the leave trap's int3: the program's registers, bound for the target's address.
    auto to = memory_.read_word(link.leave_slots + HS_RECORDER_LEAVE_TARGET_APP);
    if (!to) {
      return to.error();
    }
    if (auto w = memory_.write_word(link.leave_slots + HS_RECORDER_LEAVE_REQUEST, 0); !w) {
      return w.error();
    }
    app = *to;
  } else if (translating || (pc >= stubs_ && pc < stubs_ + HS_RECORDER_STUB_BYTES)) {
    return Way::dispatcher;
  } else if (auto to = after_syscall(link, pc)) {
    // Right after a syscall (stopped in it, maybe in one no call may disturb): the cache says
    // where, no call needed.
    app = *to;
    syscall_return_at(regs, pc, app);
  } else {
    auto mapped = app_address(pc);
    if (!mapped) {
      return mapped.error();
    }
    app = *mapped;
  }
  if (app == 0 && pc != 0) {
    if (!stepped) {
      base::logf(base::LogCat::ptrace, "thread {}: at {:#x} in the recorder: steps to a way out", tid, pc);
    }
    return Way::step;
  }
  LeftAt left{app, app == pc && pc != entry_, 0};
  left.trapped = pc == leave_trap + 1;
  if (link.exit_slot != 0) {
    auto exited = memory_.read_word(link.exit_slot);
    if (!exited) {
      return exited.error();
    }
    left.exited_at = *exited;
  }
  if (auto r = rseq_.give_back(memory_, link.rseq_cs_kept_slot, regs); !r) {
    return r.error();
  }
  regs.gpr[gpr::kRip] = app;
  regs.gpr[gpr::kGsBase] = program_gs(link, regs);
  if (stepped) {
    // A pushfq stepped saved the trap flag, and its popfq, stepped too, set it for good: the
    // program would trap after its next instruction.
    regs.gpr[gpr::kEflags] &= ~gpr::kEflagsTrap;
  }
  if (auto w = kernel_->write_registers(tid, regs, false); !w) {
    return w.error();
  }
  link.inside = false;
  link.left = left;
  return Way::out;
}

base::Result<std::optional<hs_recorder_cache_region>> RecorderLink::region_of(Addr pc) {
  const CacheView& view = cache_view_;
  auto count = memory_.read_word(view.region_count);
  if (!count) {
    return count.error();
  }
  std::vector<hs_recorder_cache_region> regions(std::min<std::uint64_t>(*count, HS_RECORDER_MAX_CACHE_REGIONS));
  if (auto r = memory_.read_bytes(view.regions, regions.data(), regions.size() * sizeof(hs_recorder_cache_region)); !r) {
    return r.error();
  }
  for (const hs_recorder_cache_region& region : regions) {
    if (pc >= region.base && pc < region.base + HS_RECORDER_CACHE_REGION_BYTES) {
      return std::optional{region};
    }
  }
  return std::optional<hs_recorder_cache_region>{};
}

base::Result<bool> RecorderLink::in_cache(Addr pc) {
  auto region = region_of(pc);
  if (!region) {
    return region.error();
  }
  return region->has_value();
}

base::Result<Addr> RecorderLink::app_address(Addr pc) {
  auto region = region_of(pc);
  if (!region) {
    return region.error();
  }
  if (!region->has_value()) {
    return pc;  // the program's own code
  }
  // Its safe points, in ascending order of cache address (the count was read with the region:
  // entries below it are written).
  std::uint64_t low = 0;
  std::uint64_t high = (*region)->safe_point_count;
  while (low < high) {
    const std::uint64_t middle = low + (high - low) / 2;
    hs_recorder_safe_point entry{};
    if (auto r = memory_.read_struct((*region)->safe_points + middle * sizeof entry, entry); !r) {
      return r.error();
    }
    if (entry.cache == pc) {
      return entry.app;
    }
    if (entry.cache < pc) {
      low = middle + 1;
    } else {
      high = middle;
    }
  }
  return Addr{0};
}

std::optional<Addr> RecorderLink::after_syscall(const ThreadLink& link, Addr pc) {
  auto exited = memory_.read_word(link.exit_slot);
  if (!exited) {
    return std::nullopt;
  }
  if (*exited != 0) {
    // It ran natively since it entered: pc may be the program's, or the cache's again (back by
    // a handler's sigreturn, say).
    auto cached = in_cache(pc);
    if (!cached || !*cached) {
      return std::nullopt;
    }
  }
  if (pc == entry_) {
    // Entered at a syscall's entry stop, the call made: its resume slot says where.
    auto resume = memory_.read_word(link.resume_slot);
    return resume ? std::optional<Addr>(*resume) : std::nullopt;
  }
  auto memory = kernel_->memory(pid_);
  if (!memory) {
    return std::nullopt;
  }
  // The marker follows the syscall instruction itself: the same two bytes elsewhere in the cache
  // (a jump over 8 bytes) are no marker.
  constexpr std::size_t kSyscallBytes = 2;
  auto marker = (*memory)->read(pc - kSyscallBytes, kSyscallBytes + HS_RECORDER_AFTER_SYSCALL_BYTES);
  if (!marker || marker->size() != kSyscallBytes + HS_RECORDER_AFTER_SYSCALL_BYTES ||
      (*marker)[0] != 0x0f || (*marker)[1] != 0x05 ||
      std::memcmp(marker->data() + kSyscallBytes, HS_RECORDER_AFTER_SYSCALL, 2) != 0) {
    return std::nullopt;
  }
  Addr to = 0;
  std::memcpy(&to, marker->data() + kSyscallBytes + 2, sizeof to);
  return to;
}

base::Result<std::optional<RecorderLink::MovedOut>> RecorderLink::leave_from_syscall(Tid tid) {
  ThreadLink* in = in_cache(tid);
  if (in == nullptr) {
    return std::optional<MovedOut>{};
  }
  ThreadLink& link = *in;
  arch::x86::RawRegisters regs;
  if (auto r = kernel_->read_gprs(tid, regs); !r) {
    return r.error();
  }
  const Addr pc = regs.gpr[gpr::kRip];
  auto to = after_syscall(link, pc);
  if (!to) {
    return std::optional<MovedOut>{};
  }
  MovedOut out{pc, *to, program_gs(link, regs)};
  syscall_return_at(regs, pc, out.to);
  regs.gpr[gpr::kRip] = out.to;
  regs.gpr[gpr::kGsBase] = out.gs_base;
  if (auto w = kernel_->write_registers(tid, regs, false); !w) {
    return w.error();
  }
  link.inside = false;
  link.left = LeftAt{out.to, false, 0};
  return std::optional<MovedOut>{out};
}

base::Result<RecorderLink::SyscallOf> RecorderLink::at_syscall(Tid tid, bool move) {
  ThreadLink* in = in_cache(tid);
  if (in == nullptr) {
    return SyscallOf::program;
  }
  ThreadLink& link = *in;
  arch::x86::RawRegisters regs;
  if (auto r = kernel_->read_gprs(tid, regs); !r) {
    return r.error();
  }
  auto exited = memory_.read_word(link.exit_slot);
  if (!exited) {
    return exited.error();
  }
  const Addr pc = regs.gpr[gpr::kRip];
  Addr to = pc;
  if (*exited != 0) {
    move = true;  // it ran the program's code natively since it left for it: the call is the program's
  } else if (auto after = after_syscall(link, pc)) {
    to = *after;
    syscall_return_at(regs, pc, to);
  } else {
    return SyscallOf::recorder;  // (the translator's mmap, a descriptor's close, ...)
  }
  if (!move) {
    return SyscallOf::program;
  }
  if (*exited == 0 && regs.gpr[gpr::kOrigRax] == SYS_rt_sigreturn && pc != entry_) {
    // The entry of the cache's sigreturn: its frame back to what the program's would hold, and
    // its branch not made yet.
    auto resume = point_sigreturn_frame(link, regs, true);
    if (!resume) {
      return resume.error();
    }
    if (auto r = ring_drop_last(memory_, link.ring, link.taken, {to - 2, *resume}); !r) {
      return r.error();
    }
  }
  regs.gpr[gpr::kRip] = to;
  regs.gpr[gpr::kGsBase] = program_gs(link, regs);
  if (auto w = kernel_->write_registers(tid, regs, false); !w) {
    return w.error();
  }
  link.inside = false;
  link.left = LeftAt{to, *exited != 0, *exited};
  return SyscallOf::program;
}

base::Result<Addr> RecorderLink::point_sigreturn_frame(ThreadLink& link, const arch::x86::RawRegisters& regs,
                                                       bool to_program) {
  constexpr Addr kSavedRip = 168;  // in the ucontext at the stack pointer (branch_sequences.cpp)
  const Addr slot = regs.gpr[gpr::kRsp] + kSavedRip;
  auto rip = memory_.read_word(slot);
  if (!rip) {
    return rip.error();
  }
  if (*rip != entry_) {
    // The program's address: into the resume slot, the frame to the thread entry (entering).
    if (!to_program) {
      if (auto w = memory_.write_word(link.resume_slot, *rip); !w) {
        return w.error();
      }
      if (auto w = memory_.write_word(slot, entry_); !w) {
        return w.error();
      }
    }
    return *rip;
  }
  // The thread entry's: the resume slot holds the program's address (back in the frame: leaving).
  auto resume = memory_.read_word(link.resume_slot);
  if (!resume) {
    return resume.error();
  }
  if (to_program) {
    if (auto w = memory_.write_word(slot, *resume); !w) {
      return w.error();
    }
  }
  return *resume;
}

base::Result<void> RecorderLink::set_syscalls_caught(bool caught) {
  if (syscalls_caught_ == caught || translator_slot_ == 0) {
    return base::success();
  }
  if (auto w = memory_.write_word(translator_slot_ + 16, caught ? 1 : 0); !w) {
    return w;
  }
  syscalls_caught_ = caught;
  return base::success();
}

base::Result<void> RecorderLink::step(Tid tid, std::vector<HeldSignal>& held) {
  if (auto r = kernel_->resume(tid, true, 0); !r) {
    return r;
  }
  bool timed_out = false;
  auto st = status_by(*kernel_, pid_, tid, std::chrono::steady_clock::now() + kLeaveLimit, timed_out);
  if (!st) {
    return st.error();
  }
  if (timed_out && WIFSTOPPED(*st) && WSTOPSIG(*st) == SIGSTOP) {
    return base::make_error(base::Errc::timed_out, fmt::format("thread {}: a step out of the recorder did not end", tid));
  }
  if (!WIFSTOPPED(*st) || (*st >> 16) == PTRACE_EVENT_EXIT) {
    threads_.erase(tid);
    kernel_->hand_back({tid, *st});  // (the core's to report)
    return base::make_error(base::Errc::no_thread, "a thread ended while it left the recorder");
  }
  if (WSTOPSIG(*st) != SIGTRAP) {
    held.push_back(held_signal(*kernel_, tid, *st));
  }
  return base::success();
}

base::Result<void> RecorderLink::run_to_leave_trap(const std::vector<Tid>& tids, std::vector<HeldSignal>& held) {
  const Addr leave_trap = stubs_ + HS_RECORDER_LEAVE_TRAP_OFFSET;
  for (Tid tid : tids) {
    // Asked, and sent to the trap should the dispatcher have read the request already.
    const ThreadLink& link = threads_[tid];
    if (auto w = memory_.write_word(link.leave_slots + HS_RECORDER_LEAVE_REQUEST, 1); !w) {
      return w;
    }
    if (auto w = memory_.write_word(link.leave_slots + HS_RECORDER_LEAVE_TARGET, leave_trap); !w) {
      return w;
    }
    // Stepped into the dispatcher (by a test, say), the flags its pushfq saved on its private
    // stack, or its own past the popfq, hold the trap flag: it would trap at every instruction.
    const Addr saved_flags = link.private_stack_top - 8;
    if (auto flags = memory_.read_word(saved_flags); flags && (*flags & gpr::kEflagsTrap) != 0) {
      (void)memory_.write_word(saved_flags, *flags & ~gpr::kEflagsTrap);
    }
    arch::x86::RawRegisters regs;
    if (kernel_->read_gprs(tid, regs) && (regs.gpr[gpr::kEflags] & gpr::kEflagsTrap) != 0) {
      regs.gpr[gpr::kEflags] &= ~gpr::kEflagsTrap;
      (void)kernel_->write_registers(tid, regs, false);
    }
  }
  std::optional<base::Error> failed;
  std::vector<Tid> running;
  for (Tid tid : tids) {
    if (auto r = kernel_->resume(tid, false, 0); !r) {
      failed = r.error();
    } else {
      running.push_back(tid);
    }
  }
  // Each is waited for, even after one failed: none is left running.
  for (Tid tid : running) {
    const auto deadline = std::chrono::steady_clock::now() + kLeaveLimit;
    bool timed_out = false;
    for (int stops = 0;; ++stops) {
      auto st = status_by(*kernel_, pid_, tid, deadline, timed_out);
      if (!st) {
        failed = st.error();
        break;
      }
      if (timed_out && WIFSTOPPED(*st) && WSTOPSIG(*st) == SIGSTOP) {
        failed = base::make_error(base::Errc::timed_out,
                                  fmt::format("thread {} did not reach the recorder's leave trap in time", tid));
        break;
      }
      if (!WIFSTOPPED(*st) || (*st >> 16) == PTRACE_EVENT_EXIT) {
        threads_.erase(tid);
        kernel_->hand_back({tid, *st});  // (the core's to report)
        failed = base::make_error(base::Errc::no_thread, "a thread ended while it left the recorder");
        break;
      }
      arch::x86::RawRegisters regs;
      if (WSTOPSIG(*st) == SIGTRAP && kernel_->read_gprs(tid, regs) && regs.gpr[gpr::kRip] == leave_trap + 1) {
        break;
      }
      if (WSTOPSIG(*st) != SIGTRAP) {
        held.push_back(held_signal(*kernel_, tid, *st));
      }
      // A fault of the recorder's own would come back at once, for ever.
      const bool fault = WSTOPSIG(*st) == SIGSEGV || WSTOPSIG(*st) == SIGBUS || WSTOPSIG(*st) == SIGILL ||
                         WSTOPSIG(*st) == SIGFPE;
      if (fault || stops == kMaxSignalsWhileLeaving) {
        failed = base::make_error(base::Errc::failed,
                                  fmt::format("thread {} stopped by signal {} in the recorder's dispatcher", tid,
                                              WSTOPSIG(*st)));
        break;
      }
      if (auto r = kernel_->resume(tid, false, 0); !r) {
        failed = r.error();
        break;
      }
    }
  }
  if (failed) {
    return *failed;
  }
  return base::success();
}

bool RecorderLink::waits_outside(Tid tid, const std::vector<Tid>& batch) {
  auto it = threads_.find(tid);
  auto owner = translator_slot_ != 0 && it != threads_.end() ? memory_.read_word(translator_slot_) : base::Result<std::uint64_t>(0);
  if (!owner || *owner == 0 || *owner == it->second.block) {
    return false;
  }
  for (Tid other : batch) {
    auto o = threads_.find(other);
    if (o != threads_.end() && o->second.block == *owner) {
      return false;  // stepped in turn, the holder gets out and lets go
    }
  }
  return true;
}

namespace {

// What the steps out of the cache must not change of the threads they run: signals that come
// meanwhile stay pending (signals_held_back.hpp), and the siginfo of the signal a thread stopped
// with is its own again after (a step's SIGTRAP takes its place; the signal, delivered later
// from that stop, would reach the program with a siginfo the kernel made up).
class StopKept {
 public:
  explicit StopKept(Kernel& kernel) : kernel_(kernel) {}
  StopKept(const StopKept&) = delete;
  StopKept& operator=(const StopKept&) = delete;
  ~StopKept() {
    for (const auto& [tid, si] : siginfo_) {
      (void)kernel_.set_siginfo(tid, si);
    }
  }
  // tid is about to run (once per tid).
  void keep(Tid tid) {
    if (held_.contains(tid)) {
      return;
    }
    arch::x86::RawRegisters regs;
    held_[tid] = kernel_.read_gprs(tid, regs) ? SignalsHeldBack::hold(kernel_, tid, regs) : SignalsHeldBack{};
    if (auto si = kernel_.get_siginfo(tid); si && si->si_signo != SIGTRAP) {
      siginfo_[tid] = *si;
    }
  }
 private:
  Kernel& kernel_;
  std::map<Tid, SignalsHeldBack> held_;
  std::map<Tid, siginfo_t> siginfo_;
};

}  // namespace

base::Result<std::vector<HeldSignal>> RecorderLink::leave(const std::vector<Tid>& tids) {
  std::vector<HeldSignal> held;
  StopKept kept(*kernel_);
  for (Tid tid : tids) {
    arch::x86::RawRegisters regs;
    if (!threads_.contains(tid) && kernel_->read_gprs(tid, regs)) {
      (void)note_if_clone(tid, regs);  // (stopped before its first entry: still its parent's double)
    }
  }
  std::vector<Tid> inside(tids);
  std::map<Tid, unsigned> steps;
  for (int round = 0; !inside.empty(); ++round) {
    if (round == kMaxSteps) {
      return base::make_error(base::Errc::timed_out, "a thread did not reach a way out of the recorder");
    }
    std::vector<Tid> stepping, dispatching;
    for (Tid tid : inside) {
      auto way = try_leave(tid, round > 0);
      if (!way) {
        return way.error();
      }
      if (*way != Way::out) {
        kept.keep(tid);
        (*way == Way::dispatcher ? dispatching : stepping).push_back(tid);
      }
    }
    for (Tid tid : dispatching) {
      if (waits_outside(tid, dispatching)) {
        // It stays in the dispatcher for now.
        held_.insert(held_.end(), held.begin(), held.end());
        return base::make_error(base::Errc::not_yet, "a thread waits for the translation lock another holds");
      }
    }
    if (auto r = run_to_leave_trap(dispatching, held); !r) {
      return r.error();
    }
    for (Tid tid : stepping) {
      if (auto s = step(tid, held); !s) {
        return s.error();
      }
      ++steps[tid];
    }
    inside = std::move(stepping);
    inside.insert(inside.end(), dispatching.begin(), dispatching.end());
  }
  for (auto [tid, n] : steps) {
    if (auto it = threads_.find(tid); it != threads_.end()) {
      it->second.left.steps = n;
    }
  }
  held.insert(held.end(), held_.begin(), held_.end());
  held_.clear();
  return held;
}

base::Result<std::vector<BranchSample>> RecorderLink::samples(Tid tid, std::uint64_t* written) {
  auto it = threads_.find(tid);
  if (it == threads_.end() || it->second.ring == 0) {
    return base::make_error(base::Errc::invalid, "the thread is not recording");
  }
  std::uint64_t head = 0, lost = 0;
  auto read = ring_samples(memory_, it->second.ring, 0, &head, &lost);
  if (read && written != nullptr) {
    *written = head;
  }
  return read;
}

base::Result<TakenSamples> RecorderLink::take(Tid tid) {
  auto it = threads_.find(tid);
  if (it == threads_.end() || it->second.ring == 0) {
    return TakenSamples{};
  }
  ThreadLink& link = it->second;
  TakenSamples out;
  std::uint64_t head = 0;
  auto read = ring_samples(memory_, link.ring, link.taken, &head, &out.lost);
  if (!read) {
    return read.error();
  }
  out.samples = std::move(*read);
  link.taken = head;
  return out;
}

RecorderLink RecorderLink::for_fork_child(Pid child) const {
  RecorderLink link = *this;  // (the library's addresses)
  link.pid_ = child;
  link.memory_ = RecorderMemory(*kernel_, child);  // (none of the parent's regions)
  link.threads_.clear();
  link.retired_.clear();  // (the parent's blocks: the child never reuses them)
  link.held_.clear();
  return link;
}

base::Result<void> RecorderLink::settle_in_fork_child(Tid caller) {
  if (auto r = call(caller, api_.settle_fork_child, {}); !r) {
    return r.error();
  }
  return base::success();
}

base::Result<void> RecorderLink::flush(Tid caller) {
  if (any_inside()) {
    return base::make_error(base::Errc::invalid, "a thread is still in the recorder");
  }
  auto r = call(caller, api_.flush, {});
  if (!r) {
    return r.error();
  }
  return base::success();
}

base::Result<void> RecorderLink::unload(Tid caller) {
  if (any_inside()) {
    return base::make_error(base::Errc::invalid, "a thread is still in the recorder");
  }
  if (auto r = call(caller, api_.shutdown, {}); !r) {
    return r.error();
  }
  // The image goes as it came: by a system call of the server's.
  auto calls = RemoteSyscalls::begin(*kernel_, pid_, caller, return_gadget_);
  if (!calls) {
    return calls.error();
  }
  auto unmapped = calls->run(SYS_munmap, {image_.base, image_.span});
  auto ended = calls->end();
  hold(calls->take_held());
  if (!unmapped) {
    return unmapped.error();
  }
  if (*unmapped != 0) {
    return base::Error{base::Errc::system, static_cast<int>(-*unmapped), "the program's munmap of the recorder"};
  }
  if (!ended) {
    return ended;
  }
  image_ = {};
  threads_.clear();
  return base::success();
}

}  // namespace tracer
