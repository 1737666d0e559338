// Out-of-line slots (arch/x86/out_of_line): which instructions may run as a copy elsewhere, and
// the bytes of the copy with its jump back.
#include <catch2/catch.hpp>

#include <vector>

#include "arch/x86/out_of_line.hpp"

using arch::x86::out_of_line_slot;
using arch::x86::relocatable_length;
using Code = std::vector<std::uint8_t>;

TEST_CASE("out-of-line: instructions a copy runs the same, and those it would not", "[arch]") {
  // Plain data instructions, whatever their length.
  CHECK(relocatable_length(Code{0x55}) == 1);                           // push rbp
  CHECK(relocatable_length(Code{0x8b, 0x45, 0xec}) == 3);               // mov eax,[rbp-0x14]
  CHECK(relocatable_length(Code{0x89, 0x7d, 0xec, 0x90}) == 3);         // mov [rbp-0x14],edi
  CHECK(relocatable_length(Code{0xf3, 0x0f, 0x1e, 0xfa}) == 4);         // endbr64
  CHECK(relocatable_length(Code{0x48, 0x83, 0xec, 0x10}) == 4);         // sub rsp,0x10
  // Relative to rip: a copy would read elsewhere.
  CHECK_FALSE(relocatable_length(Code{0x8b, 0x05, 0x10, 0x00, 0x00, 0x00}));        // mov eax,[rip+0x10]
  CHECK_FALSE(relocatable_length(Code{0x48, 0x8d, 0x05, 0x10, 0x00, 0x00, 0x00}));  // lea rax,[rip+0x10]
  // Control transfers, syscalls, traps.
  CHECK_FALSE(relocatable_length(Code{0xe8, 0, 0, 0, 0}));  // call rel32
  CHECK_FALSE(relocatable_length(Code{0xff, 0xd0}));        // call rax
  CHECK_FALSE(relocatable_length(Code{0xc3}));              // ret
  CHECK_FALSE(relocatable_length(Code{0x74, 0x02}));        // je
  CHECK_FALSE(relocatable_length(Code{0x0f, 0x05}));        // syscall
  CHECK_FALSE(relocatable_length(Code{0xcc}));              // int3
  CHECK_FALSE(relocatable_length(Code{0xf3, 0xa4}));        // rep movsb: stepped in place, one pass at a time
  CHECK_FALSE(relocatable_length(Code{0x0f, 0x0b}));        // ud2: its SIGILL belongs where it lives
  CHECK_FALSE(relocatable_length(Code{}));
  CHECK_FALSE(relocatable_length(Code{0x8b}));  // cut short
}

TEST_CASE("out-of-line: the slot is the copy, then an absolute jump to the next instruction", "[arch]") {
  const Code slot = out_of_line_slot(Code{0x8b, 0x45, 0xec}, 0x555555555150);
  CHECK(slot == Code{0x8b, 0x45, 0xec, 0xff, 0x25, 0, 0, 0, 0, 0x53, 0x51, 0x55, 0x55, 0x55, 0x55, 0, 0});
  CHECK(slot.size() <= arch::x86::kMaxSlotLength);
}
