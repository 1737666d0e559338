// Out-of-line slots (arch/x86/out_of_line): which instructions may run as a copy elsewhere, and
// the bytes of the copy (rip-relative operands rebased) with its jump back.
#include <catch2/catch.hpp>

#include <vector>

#include "arch/x86/out_of_line.hpp"

using arch::x86::out_of_line_slot;
using Code = std::vector<std::uint8_t>;

namespace {

constexpr std::uint64_t kFrom = 0x555555555150;
constexpr std::uint64_t kSlot = 0x55555555520d;

std::optional<std::uint8_t> copied_length(const Code& code) {
  auto slot = out_of_line_slot(code, kFrom, kSlot);
  return slot ? std::optional<std::uint8_t>(slot->length) : std::nullopt;
}

}  // namespace

TEST_CASE("out-of-line: instructions a copy runs the same, and those it would not", "[arch]") {
  // Plain data instructions, whatever their length.
  CHECK(copied_length(Code{0x55}) == 1);                           // push rbp
  CHECK(copied_length(Code{0x8b, 0x45, 0xec}) == 3);               // mov eax,[rbp-0x14]
  CHECK(copied_length(Code{0x89, 0x7d, 0xec, 0x90}) == 3);         // mov [rbp-0x14],edi
  CHECK(copied_length(Code{0xf3, 0x0f, 0x1e, 0xfa}) == 4);         // endbr64
  CHECK(copied_length(Code{0x48, 0x83, 0xec, 0x10}) == 4);         // sub rsp,0x10
  CHECK(copied_length(Code{0x8b, 0x05, 0x10, 0x00, 0x00, 0x00}) == 6);  // mov eax,[rip+0x10]: rebased
  // Control transfers, syscalls, traps, repeated string instructions.
  CHECK_FALSE(copied_length(Code{0xe8, 0, 0, 0, 0}));  // call rel32
  CHECK_FALSE(copied_length(Code{0xff, 0xd0}));        // call rax
  CHECK_FALSE(copied_length(Code{0xc3}));              // ret
  CHECK_FALSE(copied_length(Code{0x74, 0x02}));        // je
  CHECK_FALSE(copied_length(Code{0x0f, 0x05}));        // syscall
  CHECK_FALSE(copied_length(Code{0xcc}));              // int3
  CHECK_FALSE(copied_length(Code{0xf3, 0xa4}));        // rep movsb: stepped in place, one pass at a time
  CHECK_FALSE(copied_length(Code{0x0f, 0x0b}));        // ud2: its SIGILL belongs where it lives
  CHECK_FALSE(copied_length(Code{}));
  CHECK_FALSE(copied_length(Code{0x8b}));  // cut short
}

TEST_CASE("out-of-line: the slot is the copy, then an absolute jump to the next instruction", "[arch]") {
  auto slot = out_of_line_slot(Code{0x8b, 0x45, 0xec}, kFrom, kSlot);
  REQUIRE(slot);
  CHECK(slot->bytes == Code{0x8b, 0x45, 0xec, 0xff, 0x25, 0, 0, 0, 0, 0x53, 0x51, 0x55, 0x55, 0x55, 0x55, 0, 0});
  CHECK(slot->bytes.size() <= arch::x86::kMaxSlotLength);
}

TEST_CASE("out-of-line: a rip-relative operand still reaches its target from the slot", "[arch]") {
  // mov rax,[rip+0x2ec3] at 0x1166 reads 0x4030; copied to 0x120d it needs 0x4030 - 0x1214.
  auto slot = out_of_line_slot(Code{0x48, 0x8b, 0x05, 0xc3, 0x2e, 0x00, 0x00}, 0x1166, 0x120d);
  REQUIRE(slot);
  CHECK(Code(slot->bytes.begin(), slot->bytes.begin() + 7) == Code{0x48, 0x8b, 0x05, 0x1c, 0x2e, 0x00, 0x00});
  CHECK(Code(slot->bytes.end() - 8, slot->bytes.end()) == Code{0x6d, 0x11, 0, 0, 0, 0, 0, 0});
  // Out of reach: a slot 4 GiB away.
  CHECK_FALSE(out_of_line_slot(Code{0x48, 0x8b, 0x05, 0xc3, 0x2e, 0x00, 0x00}, 0x1166, 0x100001000));
}

TEST_CASE("out-of-line, 32-bit code: the same bytes, then jmp rel32 back", "[arch][i386]") {
  using arch::x86::Isa;
  constexpr std::uint64_t from = 0x565561fe;
  constexpr std::uint64_t slot_at = 0x56557f00;
  // 8b 05 disp32 is an absolute [disp32] in 32-bit code: copied as it is.
  const Code mov_abs{0x8b, 0x05, 0x10, 0x20, 0x55, 0x56};
  auto slot = out_of_line_slot(mov_abs, from, slot_at, Isa::I386);
  REQUIRE(slot);
  CHECK(slot->length == 6);
  REQUIRE(slot->bytes.size() == 11);
  CHECK(Code(slot->bytes.begin(), slot->bytes.begin() + 6) == mov_abs);
  CHECK(slot->bytes[6] == 0xe9);
  std::uint32_t rel = 0;
  for (int i = 0; i < 4; ++i) {
    rel |= static_cast<std::uint32_t>(slot->bytes[7 + i]) << (8 * i);
  }
  CHECK(static_cast<std::uint32_t>(slot_at + 11 + rel) == from + 6);  // lands after the original
  // 0x40 is inc eax here, a REX prefix in 64-bit code.
  auto inc = out_of_line_slot(Code{0x40, 0xc3}, from, slot_at, Isa::I386);
  REQUIRE(inc);
  CHECK(inc->length == 1);
  CHECK_FALSE(out_of_line_slot(Code{0xcd, 0x80}, from, slot_at, Isa::I386));  // int 0x80
  CHECK_FALSE(out_of_line_slot(Code{0xe8, 0, 0, 0, 0}, from, slot_at, Isa::I386));  // call
}
