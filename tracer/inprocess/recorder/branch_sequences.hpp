// The code a translated block ends with: storing a taken branch (from, to) in the thread's ring,
// leaving for another block (linked directly once it exists), a computed target's way (the
// site's own entry, then the thread's lookup table), and the dispatcher that translates on a
// miss. Every sequence keeps the program's flags (mov, lea, movzx, not, rorx and jrcxz only) and
// its registers; the program's stack is never touched except where the program's own call or
// ret would.
#pragma once

#include <cstdint>

#include "tracer/inprocess/recorder/block_map.hpp"
#include "tracer/inprocess/recorder/emitter.hpp"

namespace recorder {

// The longest a block's exits may take (a conditional's two, each with a record and a stub).
inline constexpr std::size_t kMaxExitBytes = 512;

// log2 of every ring's capacity (recorder_ring.h): the sequences wrap the head with an immediate
// (movzx for 16 bits, else BMI2's rorx). Set before anything is translated, and changed only
// with every translation forgotten.
void set_ring_bits(unsigned bits);
// Stores the sample (from, to) known at translation.
void emit_record(Emitter& e, std::uint64_t from, std::uint64_t to);
// Saves rax, rcx and rdx in the thread's slots: the registers the dispatcher is entered with.
void emit_save_scratch(Emitter& e);
// A computed branch's target is loaded into r11, and its record and site check work in rcx:
// registers compilers give a value last (the program's values in the others never pass through
// a %gs slot, whose store and load a CPU does not forward as fast as others: a record on a loop's
// path would lengthen it by that much). A direct branch's record works in rcx alone.
inline constexpr Reg kComputedTarget = kR11;
// Saves rcx, and r11 unless the target is in another register, in the thread's slots (before a
// computed target is loaded into r11).
void emit_save_computed_scratch(Emitter& e, Reg target = kComputedTarget);
// Stores (from, r11) unless r11 is `next` (the instruction after the branch: no branch, as
// SoftStep sees it; 0: always stored); saved by emit_save_computed_scratch.
void emit_record_computed(Emitter& e, std::uint64_t from, std::uint64_t next);
// Pushes the program's own return address. rcx free (saved) or not.
void emit_push_return(Emitter& e, std::uint64_t return_address, bool rcx_saved);
// A computed branch's own one-entry cache, in the cache after its code: the first target a
// dispatcher reached from it (unless that target is `next`), stored negated (0: none yet), and
// where its translation is. `from` and `next` are what the shared miss routine records by.
struct ComputedSite {
  std::uint64_t negated_key, translation, next, from;
};
// A computed branch's way on: its target in `target` (r11, loaded there, or the register of a
// `call reg` or `jmp reg`, which is neither rcx nor r11), the program's rcx saved (and r11, when
// target is r11) by emit_save_computed_scratch. (from, target) is stored unless from is 0
// (nothing recorded) or the target is `next` (no branch, as SoftStep sees it). `lifeline`: the
// server's death is checked first (returns and indirect jmps: a thread meets one soon, and
// leaves the cache there for good; a call's return comes right after it).
struct ComputedExit {
  std::uint64_t from = 0, next = 0;
  Reg target = kComputedTarget;
  bool lifeline = true;
};
// Goes to the translation of the target: a hit in the site's entry jumps straight to it; a miss
// goes to the shared miss routine with r11 = the target and r10 = the site (both saved).
void emit_computed_exit(Emitter& e, const ComputedExit& exit);
// The miss routine (one per process): records as the site says, then the thread's lookup table
// (a hit fills an empty site on the way), else the dispatcher (rcx = the site + 1: it fills the
// site after translating). A site is filled once: whoever claims its translation word (a locked
// cmpxchg from 0) stores its key.
void emit_computed_miss(Emitter& e);
// From a computed exit to the way out for good once the server died (emit_server_gone).
void emit_computed_gone(Emitter& e);
// The dispatcher's fill of `site` with the translation `made` of `target`: only an empty site
// (its translation word claimed as the miss routine claims it), never with `next`.
void fill_computed_site(std::uint64_t site, std::uint64_t target, std::uint64_t made);
// Goes to the translation of `target`: a direct jump when it exists and is in reach, else an
// absolute jump through a slot that the dispatcher fills in (linking) on first use. Until then
// the slot leads to a stub of three instructions (rcx saved, the slot's address in rcx, to the
// exit dispatch); the slot's third word is the target.
void emit_direct_exit(Emitter& e, std::uint64_t target, const BlockMap& blocks);
// The dispatcher's entry from a direct exit's stub: rax and rdx saved, rax = the target read
// from the slot (rcx), then the dispatcher (emitted right after it).
void emit_exit_dispatch(Emitter& e);
// Links a direct exit's slot (given to the dispatcher) to `made`: the slot (one 8-byte store),
// and its jmp rewritten to a direct jmp rel32 when `made` is in reach and `alone` (no other
// thread can be running that jmp while its bytes change).
void link_exit(std::uint64_t slot, std::uint64_t made, bool alone);
// Leaves the cache: the program runs natively from `target` (recording ends there; the block's
// exited_at says where, so that the server can tell a stop there from a run it did not see).
// program_gs: the real %gs base made the program's first (program_gs.hpp; FSGSBASE only).
void emit_native_exit(Emitter& e, std::uint64_t target, bool program_gs);
// Before a copied `syscall`: when it is rt_sigreturn (eax 15), the signal frame at rsp is made to
// return into the cache through the thread entry (the interrupted program address becomes the
// block's resume) and a syscall of its own does the sigreturn, so that the code after a handler
// is recorded too; any other goes on past it. rcx is free there (the syscall overwrites it);
// the flags are not kept (a syscall's caller takes them as clobbered). That own syscall is no
// safe point: a thread stopped on it steps through the sigreturn, which never blocks; one
// stopped inside it (catch syscall) finds the marker of emit_after_syscall after it, `next`
// (never run: the sigreturn does not return there).
// record_from: the syscall's program address, recorded as a branch to where the sigreturn goes
// (0: nothing recorded).
void emit_sigreturn_return(Emitter& e, std::uint64_t thread_entry, std::uint64_t record_from, std::uint64_t next);
// Before a copied `syscall` (0f 05) at syscall_pc: a call that may change the program's mappings
// (eax 9, 10, 11, 25 or 329: code_pages.hpp), or arch_prctl (158: the program's %gs base,
// program_gs.hpp), goes to the maps gate instead, with rdi..r9 in the
// block's syscall_args, rax = syscall_pc and rcx = the copy's cache address (emitted right after
// this sequence); the gate makes the call itself or has it run natively (recorder.cpp). Any other
// goes straight on to the copy. The flags are not kept, as in emit_sigreturn_return.
void emit_maps_syscall_check(Emitter& e, std::uint64_t syscall_pc);
// Right after a copied `syscall`: the marker recorder_api.h describes (HS_RECORDER_AFTER_SYSCALL,
// then `next`, the program address after the call), jumped over.
void emit_after_syscall(Emitter& e, std::uint64_t next);

// The way out for good once the server died (recorder_api.h, lifeline_slot): entered with rax =
// the program address to go on at natively, the program's rax, rcx and rdx in the block; gives
// the program its %gs base (program_gs: where FSGSBASE allows) and jumps there, every register
// and the flags the program's (its stack below the red zone used, and given back).
void emit_server_gone(Emitter& e, bool program_gs);

// Translates (rdi = program address, rsi = the slot to link, or a computed site + 1, or 0) and sets the block's target
// (and target_app) to where the thread goes on.
using TranslateFn = void (*)(std::uint64_t target, std::uint64_t link_slot);
// The dispatcher: entered with rax = target, rcx = slot or 0, scratch saved; runs translate on
// the thread's own stack with every register, the flags and the extended state kept. Then to
// the block's target, or to leave_trap when the block's leave request is set.
void emit_dispatcher(Emitter& e, TranslateFn translate, std::uint64_t leave_trap);

}  // namespace recorder
