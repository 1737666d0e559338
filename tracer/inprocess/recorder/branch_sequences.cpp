#include "tracer/inprocess/recorder/branch_sequences.hpp"

#include <cstring>

#include "tracer/inprocess/recorder/program_gs.hpp"
#include "tracer/inprocess/recorder/recorder_api.h"

namespace recorder {
namespace {

bool g_sized_rings = false;  // set_sized_rings

// shlx (0x66) or shrx (0xf2) reg, reg, count: BMI2, no flag changed.
void shift_by(Emitter& e, std::uint8_t prefix, Reg reg, Reg count) {
  const std::uint8_t pp = prefix == 0x66 ? 1 : 3;
  const std::uint8_t plain = ((reg >> 3) & 1) ^ 1;  // VEX's inverted R and B: reg is both operands
  e.bytes({0xc4, static_cast<std::uint8_t>((plain << 7) | 0x40 | (plain << 5) | 0x02),
           static_cast<std::uint8_t>(0x80 | ((~count & 15) << 3) | pp), 0xf7,
           static_cast<std::uint8_t>(0xc0 | ((reg & 7) << 3) | (reg & 7))});
}

// index = (head % capacity) * 2, head += 1 (scratch clobbered): the next sample is at
// gs:[kSamplesOffset + index * 8] (store_sample).
void take_sample_index(Emitter& e, Reg index, Reg scratch) {
  e.load_gs(index, &slots().ring.head);
  e.lea(scratch, index, kRsp, 1, 1);  // lea scratch, [index+1] (no SIB index)
  e.store_gs(&slots().ring.head, scratch);
  if (g_sized_rings) {
    e.load_gs(scratch, &slots().ring_shift);
    shift_by(e, 0x66, index, scratch);  // shlx index, index, scratch
    shift_by(e, 0xf2, index, scratch);  // shrx index, index, scratch: head's low bits
  } else {
    e.movzx16(index, index);
  }
  e.lea(index, index, index, 1, 0);  // lea index, [index+index]
}

// The sample's `from` (field 0) or `to` (field 8) from reg.
void store_sample(Emitter& e, Reg index, std::int32_t field, Reg reg) {
  e.store_gs_indexed(static_cast<std::int32_t>(kSamplesOffset) + field, index, reg);
}

}  // namespace

void set_sized_rings(bool on) {
  g_sized_rings = on;
}

void emit_record(Emitter& e, std::uint64_t from, std::uint64_t to) {
  e.store_gs(&slots().save_r10, kR10);
  e.store_gs(&slots().save_r11, kR11);
  take_sample_index(e, kR11, kR10);
  e.mov_imm64(kR10, from);
  store_sample(e, kR11, 0, kR10);
  e.mov_imm64(kR10, to);
  store_sample(e, kR11, 8, kR10);
  e.load_gs(kR10, &slots().save_r10);
  e.load_gs(kR11, &slots().save_r11);
}

void emit_save_scratch(Emitter& e) {
  e.store_gs(&slots().save_rax, kRax);
  e.store_gs(&slots().save_rcx, kRcx);
  e.store_gs(&slots().save_rdx, kRdx);
}

void emit_save_computed_scratch(Emitter& e) {
  e.store_gs(&slots().save_r11, kR11);
  e.store_gs(&slots().save_rcx, kRcx);
  e.store_gs(&slots().save_r10, kR10);
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
  take_sample_index(e, kRcx, kR10);
  store_sample(e, kRcx, 8, kComputedTarget);
  e.mov_imm64(kR10, from);
  store_sample(e, kRcx, 0, kR10);
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

// From a lookup's registers (the target in r11; the program's r11, rcx and r10 in their slots)
// to those the dispatcher and the way out for good are entered with: rax the target, the
// program's rax, rcx and rdx in their slots, every other register the program's.
void to_dispatcher_registers(Emitter& e) {
  e.store_gs(&slots().save_rax, kRax);
  e.store_gs(&slots().save_rdx, kRdx);
  e.mov(kRax, kComputedTarget);
  e.load_gs(kR11, &slots().save_r11);
  e.load_gs(kR10, &slots().save_r10);
}

}  // namespace

void emit_lookup(Emitter& e) {
  // The server died (its lifeline marked): out for good, to the target natively (`gone`).
  e.bytes({0x65, 0x8b, 0x0c, 0x25});  // mov ecx, dword gs:[lifeline]
  e.u32(static_cast<std::uint32_t>(gs_offset(&slots().lifeline)));
  e.bytes({0x8d, 0x89});  // lea ecx, [rcx - HS_RECORDER_SERVER_DIED]
  e.u32(static_cast<std::uint32_t>(-static_cast<std::int32_t>(HS_RECORDER_SERVER_DIED)));
  e.bytes({0x67, 0xe3, 0});  // jecxz gone
  std::uint8_t* to_gone = e.here() - 1;
  // The thread's lookup table: the entry at the target's low 16 bits.
  e.movzx16(kRcx, kComputedTarget);
  e.lea(kRcx, kRcx, kRcx, 1, 0);  // lea rcx, [rcx+rcx]
  e.load_gs(kR10, &slots().lookup);
  e.lea(kR10, kR10, kRcx, 8, 0);  // lea r10, [r10+rcx*8]
  e.load(kRcx, kR10, 0);          // mov rcx, [r10]: its key
  e.not_reg(kRcx);
  e.lea(kRcx, kRcx, kComputedTarget, 1, 1);  // lea rcx, [rcx+r11+1]: r11 - key
  e.bytes({0xe3, 0});                        // jrcxz hit
  std::uint8_t* to_hit = e.here() - 1;
  // A miss: the dispatcher translates it (no exit to link).
  to_dispatcher_registers(e);
  e.bytes({0xb9, 0, 0, 0, 0});  // mov ecx, 0
  e.jmp_gs(&slots().dispatch);
  // gone:
  patch_rel8(to_gone, e.here());
  to_dispatcher_registers(e);
  e.jmp_gs(&slots().server_gone);
  // hit:
  patch_rel8(to_hit, e.here());
  e.load(kR10, kR10, 8);  // mov r10, [r10+8]: its translation
  e.store_gs(&slots().target, kR10);
  e.load_gs(kR11, &slots().save_r11);
  e.load_gs(kRcx, &slots().save_rcx);
  e.load_gs(kR10, &slots().save_r10);
  e.jmp_gs(&slots().target);
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
