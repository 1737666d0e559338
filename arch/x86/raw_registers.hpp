// Conversions between what ptrace hands us (user_regs_struct + the XSAVE area) and the `g`
// packet / single registers of a RegisterLayout. Pure: no syscalls, no CPUID.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "arch/x86/register_layout.hpp"
#include "base/result.hpp"

namespace arch::x86 {

struct RawRegisters {
  // Linux user_regs_struct order (see GprWord): r15 r14 r13 r12 rbp rbx r11 r10 r9 r8 rax
  // rcx rdx rsi rdi orig_rax rip cs eflags rsp ss fs_base gs_base ds es fs gs.
  std::array<uint64_t, kGprWords> gpr{};
  // Full XSAVE area as PTRACE_GETREGSET NT_X86_XSTATE returns it (512 bytes: FXSAVE only).
  std::vector<uint8_t> xsave;
};

// All registers of the layout, in `g` order. Registers in an initial-state or unavailable
// component read as their initial value (zeros; fctrl 0x37f, ftag 0xffff, mxcsr 0x1f80).
std::vector<uint8_t> to_g_packet(const RegisterLayout& layout, const RawRegisters& raw);

// Applies a `G` write, full or a prefix (a register cut by the end of `g` keeps its other
// bytes). Registers whose value does not change are left alone; xstate_changed is set when a
// byte of the XSAVE area (or an XSTATE_BV bit) changed. On error `raw` may be half-written.
base::Result<void> from_g_packet(const RegisterLayout& layout, std::span<const uint8_t> g,
                                 RawRegisters& raw, bool& xstate_changed);

// One register by GDB regnum (`p`); Errc::invalid for an unknown regnum.
base::Result<std::vector<uint8_t>> read_register(const RegisterLayout& layout,
                                                 const RawRegisters& raw, int regnum);

// One register by GDB regnum (`P`); `value` must be exactly the register's size. Writing a
// component that is in its initial state initialises it and sets its XSTATE_BV bit.
base::Result<void> write_register(const RegisterLayout& layout, int regnum,
                                  std::span<const uint8_t> value, RawRegisters& raw,
                                  bool& xstate_changed);

// x87 tag word: the full 16-bit form GDB shows, rebuilt from FXSAVE's abridged byte, the
// status word's TOP and the register contents; and back (empty = 11, anything else = valid).
uint16_t full_tag_word(std::span<const uint8_t> fxsave);
uint8_t abridged_tag_byte(uint16_t full_tag);

// Linux's copy of XCR0 in the NT_X86_XSTATE area (bytes 464..471); 0 if the area is short.
uint64_t xcr0_from_xsave(std::span<const uint8_t> xsave);
// XSTATE_BV (header offset 512); 0 if the area has no header.
uint64_t xstate_bv(std::span<const uint8_t> xsave);

}  // namespace arch::x86
