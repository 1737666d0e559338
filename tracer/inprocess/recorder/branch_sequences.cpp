#include "tracer/inprocess/recorder/branch_sequences.hpp"

#include <cstddef>
#include <cstring>

#include "tracer/inprocess/recorder/program_gs.hpp"
#include "tracer/inprocess/recorder/recorder_api.h"

namespace recorder {
namespace {

unsigned g_ring_bits = 16;  // set_ring_bits

// rorx reg, reg, imm (BMI2: a rotation by an immediate, no flag changed), of the low 32 bits
// (zero-extended) or of all 64.
void rotate_right(Emitter& e, Reg reg, unsigned bits, bool wide) {
  const std::uint8_t plain = ((reg >> 3) & 1) ^ 1;  // VEX's inverted R and B: reg is both operands
  e.bytes({0xc4, static_cast<std::uint8_t>((plain << 7) | 0x40 | (plain << 5) | 0x03),
           static_cast<std::uint8_t>(wide ? 0xfb : 0x7b), 0xf0,
           static_cast<std::uint8_t>(0xc0 | ((reg & 7) << 3) | (reg & 7)), static_cast<std::uint8_t>(bits)});
}

// The ring's next slot in rcx, no other register or flag touched: head += 1, then rcx = the new
// head % capacity, doubled (recorder_ring.h: sample n lives at (n + 1) % capacity, so that one
// register serves as the head and the slot). The sample then goes to gs:[kSamplesOffset + rcx * 8]
// (store_sample).
void take_sample_slot(Emitter& e) {
  e.load_gs(kRcx, &slots().ring.head);
  e.lea(kRcx, kRcx, kRsp, 1, 1);  // lea rcx, [rcx+1] (no SIB index)
  e.store_gs(&slots().ring.head, kRcx);
  if (g_ring_bits == 16) {
    e.movzx16(kRcx, kRcx);
  } else {
    // The low 32 bits rotated right by `bits`, the whole register right by 32 - bits: the slot
    // comes down to the low bits and the head's other low bits go to the upper half, which a
    // 32-bit move clears.
    rotate_right(e, kRcx, g_ring_bits, false);
    rotate_right(e, kRcx, 32 - g_ring_bits, true);
    e.bytes({0x89, 0xc9});  // mov ecx, ecx
  }
  e.lea(kRcx, kRcx, kRcx, 1, 0);  // lea rcx, [rcx+rcx]
}

// The sample's `from` (field 0) or `to` (field 8) from reg.
void store_sample(Emitter& e, std::int32_t field, Reg reg) {
  e.store_gs_indexed(static_cast<std::int32_t>(kSamplesOffset) + field, kRcx, reg);
}

// The sample's `from` or `to` as two 32-bit stores of `value`: no register needed.
void store_sample_value(Emitter& e, std::int32_t field, std::uint64_t value) {
  for (std::int32_t half = 0; half < 2; ++half) {
    e.store_gs_indexed_imm32(static_cast<std::int32_t>(kSamplesOffset) + field + 4 * half, kRcx,
                             static_cast<std::uint32_t>(value >> (32 * half)));
  }
}

}  // namespace

void set_ring_bits(unsigned bits) {
  g_ring_bits = bits;
}

void emit_record(Emitter& e, std::uint64_t from, std::uint64_t to) {
  e.store_gs(&slots().save_rcx, kRcx);
  take_sample_slot(e);
  store_sample_value(e, 0, from);
  store_sample_value(e, 8, to);
  e.load_gs(kRcx, &slots().save_rcx);
}

void emit_save_scratch(Emitter& e) {
  e.store_gs(&slots().save_rax, kRax);
  e.store_gs(&slots().save_rcx, kRcx);
  e.store_gs(&slots().save_rdx, kRdx);
}

void emit_save_computed_scratch(Emitter& e, Reg target) {
  if (target == kComputedTarget) {
    e.store_gs(&slots().save_r11, kR11);
  }
  e.store_gs(&slots().save_rcx, kRcx);
}

void emit_record_computed(Emitter& e, std::uint64_t from, std::uint64_t next) {
  std::uint8_t* over = nullptr;
  if (next != 0) {
    e.mov_imm64(kRcx, next);
    e.not_reg(kRcx);
    e.lea(kRcx, kRcx, kComputedTarget, 1, 1);  // lea rcx, [rcx+r11+1]: r11 - next
    e.bytes({0xe3, 0});                        // jrcxz over
    over = e.here() - 1;
  }
  take_sample_slot(e);
  store_sample(e, 8, kComputedTarget);
  store_sample_value(e, 0, from);
  if (over != nullptr) {
    *over = static_cast<std::uint8_t>(e.here() - (over + 1));
  }
}

void emit_push_return(Emitter& e, std::uint64_t return_address, bool rcx_saved) {
  e.bytes({0x48, 0x8d, 0x64, 0x24, 0xf8});  // lea rsp, [rsp-8]
  const Reg value = rcx_saved ? kRcx : kR11;
  if (!rcx_saved) {
    e.store_gs(&slots().save_r11, kR11);
  }
  e.mov_imm64(value, return_address);
  e.store_at_rsp(value);
  if (!rcx_saved) {
    e.load_gs(kR11, &slots().save_r11);
  }
}

namespace {

// rel8 of the short jump whose displacement byte is at `at`, to `to` (in reach by layout).
void patch_rel8(std::uint8_t* at, const std::uint8_t* to) {
  const std::ptrdiff_t rel = to - (at + 1);
  if (rel < INT8_MIN || rel > INT8_MAX) {
    __builtin_trap();  // (a layout that outgrew a short jump: a bug of this file's)
  }
  *at = static_cast<std::uint8_t>(rel);
}

// From a computed exit's registers (the target in r11; the program's r11 and rcx in their slots)
// to those the dispatcher and the way out for good are entered with: rax the target, the
// program's rax, rcx and rdx in their slots, every other register the program's.
void to_dispatcher_registers(Emitter& e) {
  e.store_gs(&slots().save_rax, kRax);
  e.store_gs(&slots().save_rdx, kRdx);
  e.mov(kRax, kComputedTarget);
  e.load_gs(kR11, &slots().save_r11);
}

}  // namespace

void emit_computed_exit(Emitter& e, const ComputedExit& exit) {
  const Reg target = exit.target;
  // To the shared routines' registers: the target in r11, the program's r11 in its slot.
  auto target_to_r11 = [&] {
    if (target != kComputedTarget) {
      e.store_gs(&slots().save_r11, kR11);
      e.mov(kR11, target);
    }
  };
  // The server died (its lifeline marked): out for good, to the target natively (`gone`).
  std::uint8_t* to_gone = nullptr;
  if (exit.lifeline) {
    e.bytes({0x65, 0x8b, 0x0c, 0x25});  // mov ecx, dword gs:[lifeline]
    e.u32(static_cast<std::uint32_t>(gs_offset(&slots().lifeline)));
    e.bytes({0x8d, 0x89});  // lea ecx, [rcx - HS_RECORDER_SERVER_DIED]
    e.u32(static_cast<std::uint32_t>(-static_cast<std::int32_t>(HS_RECORDER_SERVER_DIED)));
    e.bytes({0x67, 0xe3, 0});  // jecxz gone
    to_gone = e.here() - 1;
  }
  // The site's own entry: its key is stored negated, so that rcx = key' + target is 0 on a hit.
  e.bytes({0x48, 0x8b, 0x0d});  // mov rcx, [rip + site.negated_key]
  std::uint8_t* key_at = e.here();
  e.u32(0);
  e.lea(kRcx, kRcx, target, 1, 0);  // lea rcx, [rcx+target]
  e.bytes({0xe3, 0});               // jrcxz hit
  std::uint8_t* to_hit = e.here() - 1;
  // A miss: the shared routine records, probes the thread's table and fills the site.
  target_to_r11();
  e.store_gs(&slots().save_r10, kR10);
  e.bytes({0x4c, 0x8d, 0x15});  // lea r10, [rip + site]
  std::uint8_t* site_at = e.here();
  e.u32(0);
  e.jmp_gs(&slots().computed_miss);
  if (to_gone != nullptr) {
    patch_rel8(to_gone, e.here());
    target_to_r11();
    e.jmp_gs(&slots().computed_gone);
  }
  // hit: the target is the site's, never `next` (fill_computed_site), so always a branch.
  patch_rel8(to_hit, e.here());
  if (exit.from != 0) {
    take_sample_slot(e);
    store_sample(e, 8, target);
    store_sample_value(e, 0, exit.from);
  }
  if (target == kComputedTarget) {
    e.load_gs(kR11, &slots().save_r11);
  }
  e.load_gs(kRcx, &slots().save_rcx);
  e.bytes({0xff, 0x25});  // jmp [rip + site.translation]
  std::uint8_t* jmp_at = e.here();
  e.u32(0);
  while (e.address() % 8 != 0) {
    e.bytes({0xcc});  // (never run)
  }
  const std::uint64_t site = e.address();
  static_assert(sizeof(ComputedSite) == 32);
  e.u64(0);
  e.u64(0);
  e.u64(exit.next);
  e.u64(exit.from);
  patch_rel32(key_at, site + offsetof(ComputedSite, negated_key));
  patch_rel32(site_at, site);
  patch_rel32(jmp_at, site + offsetof(ComputedSite, translation));
}

void emit_computed_miss(Emitter& e) {
  static_assert(offsetof(ComputedSite, translation) == 8 && offsetof(ComputedSite, next) == 16 &&
                offsetof(ComputedSite, from) == 24);
  e.store_gs(&slots().save_rax, kRax);
  // The record (from, r11), unless the site records nothing or r11 is the next instruction.
  e.load(kRcx, kR10, 24);  // mov rcx, [r10 + from]
  e.bytes({0xe3, 0});      // jrcxz lookup
  std::uint8_t* no_record = e.here() - 1;
  e.load(kRcx, kR10, 16);  // mov rcx, [r10 + next]
  e.not_reg(kRcx);
  e.lea(kRcx, kRcx, kComputedTarget, 1, 1);  // lea rcx, [rcx+r11+1]: r11 - next
  e.bytes({0xe3, 0});                        // jrcxz lookup
  std::uint8_t* not_a_branch = e.here() - 1;
  take_sample_slot(e);
  store_sample(e, 8, kComputedTarget);
  e.load(kRax, kR10, 24);
  store_sample(e, 0, kRax);
  // lookup: the thread's table, the entry at the target's low 16 bits.
  patch_rel8(no_record, e.here());
  patch_rel8(not_a_branch, e.here());
  e.movzx16(kRcx, kComputedTarget);
  e.lea(kRcx, kRcx, kRcx, 1, 0);  // lea rcx, [rcx+rcx]
  e.load_gs(kRax, &slots().lookup);
  e.lea(kRax, kRax, kRcx, 8, 0);  // lea rax, [rax+rcx*8]
  e.load(kRcx, kRax, 0);          // mov rcx, [rax]: its key
  e.not_reg(kRcx);
  e.lea(kRcx, kRcx, kComputedTarget, 1, 1);  // lea rcx, [rcx+r11+1]: r11 - key
  e.bytes({0xe3, 0});                        // jrcxz hit
  std::uint8_t* to_hit = e.here() - 1;
  // dispatch: translated, and the site filled, by the dispatcher (rcx = the site, tagged).
  std::uint8_t* dispatch = e.here();
  e.store_gs(&slots().save_rdx, kRdx);
  e.lea(kRcx, kR10, kRsp, 1, 1);  // lea rcx, [r10+1] (no SIB index)
  e.mov(kRax, kComputedTarget);
  e.load_gs(kR11, &slots().save_r11);
  e.load_gs(kR10, &slots().save_r10);
  e.jmp_gs(&slots().dispatch);
  // hit: on to its translation, the site filled first while it is empty.
  patch_rel8(to_hit, e.here());
  e.load(kRax, kRax, 8);  // mov rax, [rax+8]: the translation
  e.load(kRcx, kR10, 0);  // mov rcx, [r10 + negated_key]
  e.bytes({0xe3, 0});     // jrcxz fill
  std::uint8_t* to_fill = e.here() - 1;
  std::uint8_t* go = e.here();
  // The server may ask a thread stopped in here to leave (recorder_api.h, leave_slots): after
  // its target is stored (the program address it stands for first), the server's trap there is
  // taken; before, the dispatcher takes it.
  e.store_gs(&slots().target_app, kComputedTarget);
  e.store_gs(&slots().target, kRax);
  e.load_gs(kRcx, &slots().leave_request);
  e.bytes({0xe3, 2});  // jrcxz on
  e.bytes({0xeb, 0});  // jmp dispatch
  patch_rel8(e.here() - 1, dispatch);
  // on:
  e.load_gs(kRax, &slots().save_rax);
  e.load_gs(kR11, &slots().save_r11);
  e.load_gs(kRcx, &slots().save_rcx);
  e.load_gs(kR10, &slots().save_r10);
  e.jmp_gs(&slots().target);
  // fill: never with the next instruction (no branch); the translation word claimed with a
  // locked cmpxchg from 0 (the program's flags kept on its stack, below the red zone), and only
  // its claimer stores the key (fill_computed_site claims the same way).
  patch_rel8(to_fill, e.here());
  e.load(kRcx, kR10, 16);  // mov rcx, [r10 + next]
  e.not_reg(kRcx);
  e.lea(kRcx, kRcx, kComputedTarget, 1, 1);  // lea rcx, [rcx+r11+1]: r11 - next
  e.bytes({0xe3, 0});                        // jrcxz go
  patch_rel8(e.here() - 1, go);
  e.mov(kRcx, kRax);
  e.bytes({0x48, 0x8d, 0x64, 0x24, 0x80});  // lea rsp, [rsp-128]
  e.bytes({0x9c, 0x31, 0xc0});              // pushfq; xor eax, eax
  e.bytes({0xf0, 0x49, 0x0f, 0xb1, 0x4a, 0x08});  // lock cmpxchg [r10 + translation], rcx
  e.bytes({0x75, 0});                             // jne claimed
  std::uint8_t* claimed = e.here() - 1;
  e.mov(kRax, kComputedTarget);
  e.bytes({0x48, 0xf7, 0xd8});  // neg rax
  e.bytes({0x49, 0x89, 0x02});  // mov [r10 + negated_key], rax
  patch_rel8(claimed, e.here());
  e.bytes({0x9d});                                              // popfq
  e.bytes({0x48, 0x8d, 0xa4, 0x24, 0x80, 0x00, 0x00, 0x00});  // lea rsp, [rsp+128]
  e.mov(kRax, kRcx);
  e.bytes({0xe9});  // jmp go
  e.u32(0);
  patch_rel32(e.here() - 4, reinterpret_cast<std::uint64_t>(go));
}

void emit_computed_gone(Emitter& e) {
  to_dispatcher_registers(e);
  e.jmp_gs(&slots().server_gone);
}

void fill_computed_site(std::uint64_t site, std::uint64_t target, std::uint64_t made) {
  auto* s = reinterpret_cast<ComputedSite*>(site);
  std::uint64_t empty = 0;
  if (target == s->next ||
      !__atomic_compare_exchange_n(&s->translation, &empty, made, false, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED)) {
    return;  // (the next instruction is no branch; claimed by an earlier target)
  }
  __atomic_store_n(&s->negated_key, -target, __ATOMIC_RELEASE);  // (a reader sees the translation first)
}

void emit_direct_exit(Emitter& e, std::uint64_t target, const BlockMap& blocks) {
  const std::uint64_t known = blocks.find(target);
  if (known != 0) {
    const std::int64_t rel = static_cast<std::int64_t>(known - (e.address() + 5));
    if (rel >= INT32_MIN && rel <= INT32_MAX) {
      e.bytes({0xe9});
      e.u32(static_cast<std::uint32_t>(rel));
      return;
    }
  }
  // jmp [rip+disp] through a slot placed after the stub, 8-byte aligned (one store links it),
  // and after the slot the jmp's own address, which linking rewrites to a jmp rel32 when in
  // reach, then the target.
  std::uint8_t* jmp_at = e.here();
  e.bytes({0xff, 0x25});
  std::uint8_t* disp_at = e.here();
  e.u32(0);
  std::uint8_t* stub = e.here();
  std::uint8_t* slot_disp_at = nullptr;
  if (known == 0) {
    e.store_gs(&slots().save_rcx, kRcx);
    e.bytes({0x48, 0x8d, 0x0d});  // lea rcx, [rip + the slot]
    slot_disp_at = e.here();
    e.u32(0);
    e.jmp_gs(&slots().exit_dispatch);
  }
  while (e.address() % 8 != 0) {
    e.bytes({0xcc});  // (never run)
  }
  const std::uint64_t slot = e.address();
  e.u64(known != 0 ? known : reinterpret_cast<std::uint64_t>(stub));
  e.u64(known != 0 ? 0 : reinterpret_cast<std::uint64_t>(jmp_at));
  e.u64(target);
  patch_rel32(disp_at, slot);
  if (slot_disp_at != nullptr) {
    patch_rel32(slot_disp_at, slot);
  }
}

void emit_exit_dispatch(Emitter& e) {
  e.store_gs(&slots().save_rax, kRax);
  e.store_gs(&slots().save_rdx, kRdx);
  e.load(kRax, kRcx, 16);  // mov rax, [rcx+16]: the slot's target
}

void link_exit(std::uint64_t slot, std::uint64_t made, bool alone) {
  auto* words = reinterpret_cast<std::uint64_t*>(slot);
  __atomic_store_n(&words[0], made, __ATOMIC_RELEASE);
  if (words[1] == 0 || !alone) {
    return;
  }
  auto* jmp = reinterpret_cast<std::uint8_t*>(words[1]);
  const std::int64_t rel = static_cast<std::int64_t>(made - (words[1] + 5));
  if (rel >= INT32_MIN && rel <= INT32_MAX) {
    const auto rel32 = static_cast<std::int32_t>(rel);
    __builtin_memcpy(jmp + 1, &rel32, 4);
    jmp[0] = 0xe9;
  }
  words[1] = 0;
}

void emit_native_exit(Emitter& e, std::uint64_t target, bool program_gs) {
  e.store_gs_imm64(&slots().exited_at, target);
  if (program_gs) {
    emit_program_gs_for_native(e);
  }
  e.bytes({0xff, 0x25, 0, 0, 0, 0});
  e.u64(target);
}

void emit_sigreturn_return(Emitter& e, std::uint64_t thread_entry, std::uint64_t record_from, std::uint64_t next) {
  constexpr std::uint8_t kSavedRip = 168;  // ucontext_t: flags, link, stack (40), then gregs[REG_RIP = 16]
  // Not rt_sigreturn: over, the flags untouched (the syscall hands them to r11).
  e.bytes({0x8d, 0x48, static_cast<std::uint8_t>(-15)});  // lea ecx, [rax - 15] (rcx is the syscall's)
  e.bytes({0x67, 0xe3, 5});                               // jecxz sigreturn
  e.bytes({0xe9});                                        // jmp over
  std::uint8_t* over = e.here();
  e.u32(0);
  // (every register is free: the sigreturn takes them all from the frame)
  static_assert(kComputedTarget == kR11);
  e.bytes({0x4c, 0x8b, 0x9c, 0x24, kSavedRip, 0, 0, 0});  // mov r11, [rsp+rip]
  if (record_from != 0) {
    emit_record_computed(e, record_from, 0);  // the sigreturn's branch: (syscall, where it returns)
  }
  e.store_gs(&slots().resume, kComputedTarget);
  e.mov_imm64(kRcx, thread_entry);
  e.bytes({0x48, 0x89, 0x8c, 0x24, kSavedRip, 0, 0, 0});  // mov [rsp+rip], rcx
  e.bytes({0xb8, 0x0f, 0, 0, 0});                          // mov eax, 15
  e.bytes({0x0f, 0x05});                                  // syscall (rt_sigreturn: no return here)
  emit_after_syscall(e, next);
  const auto rel = static_cast<std::uint32_t>(e.here() - (over + 4));
  __builtin_memcpy(over, &rel, 4);
}

void emit_maps_syscall_check(Emitter& e, std::uint64_t syscall_pc) {
  // Compared with no flag changed (the syscall hands the program's flags to r11): rcx, which the
  // syscall overwrites anyway, takes eax - number, and jecxz jumps on zero.
  std::uint8_t* to_gate[6];
  int n = 0;
  // mmap, mprotect, munmap, mremap, pkey_mprotect, and arch_prctl (the program's %gs: program_gs.hpp)
  for (std::uint32_t number : {9u, 10u, 11u, 25u, 329u, 158u}) {
    e.bytes({0x8d, 0x88});  // lea ecx, [rax - number]
    e.u32(static_cast<std::uint32_t>(-static_cast<std::int32_t>(number)));
    e.bytes({0x67, 0xe3, 0});  // jecxz gate
    to_gate[n++] = e.here() - 1;
  }
  e.bytes({0xe9});  // jmp copy
  std::uint8_t* to_copy = e.here();
  e.u32(0);
  for (std::uint8_t* rel : to_gate) {
    *rel = static_cast<std::uint8_t>(e.here() - (rel + 1));
  }
  emit_save_scratch(e);
  const Reg args[] = {kRdi, kRsi, kRdx, kR10, kR8, kR9};
  for (int i = 0; i < 6; ++i) {
    e.store_gs(&slots().syscall_args[i], args[i]);
  }
  e.mov_imm64(kRax, syscall_pc);
  e.bytes({0x48, 0xb9});  // mov rcx, the copy's address
  std::uint8_t* copy_imm = e.here();
  e.u64(0);
  e.jmp_gs(&slots().maps_gate);
  const auto rel = static_cast<std::uint32_t>(e.here() - (to_copy + 4));
  __builtin_memcpy(to_copy, &rel, 4);
  const std::uint64_t copy = e.address();
  __builtin_memcpy(copy_imm, &copy, 8);
}

void emit_after_syscall(Emitter& e, std::uint64_t next) {
  static_assert(sizeof(HS_RECORDER_AFTER_SYSCALL) - 1 + 8 == HS_RECORDER_AFTER_SYSCALL_BYTES);
  e.raw(reinterpret_cast<const std::uint8_t*>(HS_RECORDER_AFTER_SYSCALL), 2);
  e.u64(next);
}

void emit_server_gone(Emitter& e, bool program_gs) {
  e.bytes({0x48, 0x8d, 0xa4, 0x24, 0x70, 0xff, 0xff, 0xff});  // lea rsp, [rsp-144]
  e.bytes({0x48, 0x89, 0x44, 0x24, 0x08});                    // mov [rsp+8], rax: where to
  e.load_gs(kRax, &slots().save_rax);
  e.bytes({0x48, 0x89, 0x04, 0x24});  // mov [rsp], rax: the program's rax
  e.load_gs(kRcx, &slots().save_rcx);
  e.load_gs(kRdx, &slots().save_rdx);
  if (program_gs) {
    e.load_gs(kRax, &slots().app_gs);
    e.bytes({0xf3, 0x48, 0x0f, 0xae, 0xd8});  // wrgsbase rax (no gs-relative access after this)
  }
  e.bytes({0x58});              // pop rax
  e.bytes({0xc2, 0x80, 0x00});  // ret 128: to where, and the stack pointer the program's
}

void emit_dispatcher(Emitter& e, TranslateFn translate, std::uint64_t leave_trap) {
  e.store_gs(&slots().save_rsp, kRsp);
  e.load_gs(kRsp, &slots().private_stack_top);
  e.bytes({0x9c, 0xfc});                          // pushfq; cld (the ABI's direction)
  e.bytes({0x56, 0x57, 0x41, 0x50, 0x41, 0x51,    // push rsi, rdi, r8, r9,
           0x41, 0x52, 0x41, 0x53});              //      r10, r11
  e.bytes({0x48, 0x83, 0xec, 0x08});              // sub rsp, 8: 16-byte aligned at the call
  e.bytes({0x48, 0x89, 0xc7, 0x48, 0x89, 0xce});  // mov rdi, rax; mov rsi, rcx
  e.bytes({0xb8, 0xff, 0xff, 0xff, 0xff, 0xba, 0xff, 0xff, 0xff, 0xff});  // eax = edx = -1
  e.load_gs(kR8, &slots().xsave_area);
  e.bytes({0x49, 0x0f, 0xae, 0x20});  // xsave64 [r8]: every enabled component
  e.mov_imm64(kRax, reinterpret_cast<std::uint64_t>(translate));
  e.bytes({0xff, 0xd0});  // call rax (it sets the block's target)
  // Asked to leave: to the trap instead (the flags are the pushfq's until the popfq below).
  e.load_gs(kRax, &slots().leave_request);
  e.bytes({0x48, 0x85, 0xc0, 0x74, 0});  // test rax, rax; jz over
  std::uint8_t* over = e.here() - 1;
  e.mov_imm64(kRax, leave_trap);
  e.store_gs(&slots().target, kRax);
  *over = static_cast<std::uint8_t>(e.here() - (over + 1));
  e.bytes({0xb8, 0xff, 0xff, 0xff, 0xff, 0xba, 0xff, 0xff, 0xff, 0xff});
  e.load_gs(kR8, &slots().xsave_area);
  e.bytes({0x49, 0x0f, 0xae, 0x28});                                      // xrstor64 [r8]
  e.bytes({0x48, 0x83, 0xc4, 0x08});                                      // add rsp, 8
  e.bytes({0x41, 0x5b, 0x41, 0x5a, 0x41, 0x59, 0x41, 0x58, 0x5f, 0x5e});  // pop r11..rsi
  e.bytes({0x9d});                                                        // popfq
  e.load_gs(kRsp, &slots().save_rsp);
  e.load_gs(kRax, &slots().save_rax);
  e.load_gs(kRcx, &slots().save_rcx);
  e.load_gs(kRdx, &slots().save_rdx);
  e.jmp_gs(&slots().target);
}

}  // namespace recorder
