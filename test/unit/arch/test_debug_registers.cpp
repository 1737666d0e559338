// DR7 encoding, slot allocation and the length/alignment rules of arch/x86/debug_registers.
#include <catch2/catch.hpp>

#include "arch/x86/debug_registers.hpp"

using arch::x86::DebugSlots;
using arch::x86::DrType;

TEST_CASE("DR7: enable, R/W and LEN bits per slot", "[arch][dr7]") {
  // Slot 0 execute: L0 only (R/W 00, LEN 00).
  CHECK(arch::x86::dr7_slot_bits(0, DrType::Execute, 1) == 0x1);
  // Slot 1 write, 4 bytes: L1 (bit 2), R/W1 = 01 at bit 20, LEN1 = 11 at bit 22.
  CHECK(arch::x86::dr7_slot_bits(1, DrType::Write, 4) == ((1ull << 2) | (1ull << 20) | (3ull << 22)));
  // Slot 2 access, 8 bytes: L2 (bit 4), R/W2 = 11 at bit 24, LEN2 = 10 at bit 26.
  CHECK(arch::x86::dr7_slot_bits(2, DrType::Access, 8) == ((1ull << 4) | (3ull << 24) | (2ull << 26)));
  // Slot 3 read (armed as access), 2 bytes: L3 (bit 6), R/W3 = 11 at bit 28, LEN3 = 01 at 30.
  CHECK(arch::x86::dr7_slot_bits(3, DrType::Read, 2) == ((1ull << 6) | (3ull << 28) | (1ull << 30)));
  // 1 byte write in slot 0: LEN 00.
  CHECK(arch::x86::dr7_slot_bits(0, DrType::Write, 1) == ((1ull << 0) | (1ull << 16)));
}

TEST_CASE("debug ranges: lengths 1, 2, 4, 8, aligned; breakpoints length 1", "[arch][dr7]") {
  for (int len : {1, 2, 4, 8}) {
    CHECK(arch::x86::check_debug_range(DrType::Write, 0x1000, len).ok());
    CHECK(arch::x86::check_debug_range(DrType::Access, 0x1000 + static_cast<unsigned>(len), len).ok());
  }
  CHECK(arch::x86::check_debug_range(DrType::Read, 0x1001, 1).ok());
  CHECK_FALSE(arch::x86::check_debug_range(DrType::Write, 0x1000, 3).ok());
  CHECK_FALSE(arch::x86::check_debug_range(DrType::Write, 0x1000, 16).ok());
  CHECK_FALSE(arch::x86::check_debug_range(DrType::Write, 0x1002, 4).ok());
  CHECK_FALSE(arch::x86::check_debug_range(DrType::Access, 0x1004, 8).ok());
  CHECK(arch::x86::check_debug_range(DrType::Execute, 0x401123, 1).ok());
  CHECK_FALSE(arch::x86::check_debug_range(DrType::Execute, 0x401123, 4).ok());
  auto bad = arch::x86::check_debug_range(DrType::Write, 0x1001, 2);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().code == base::Errc::invalid);
}

TEST_CASE("debug ranges: unaligned and long ranges split into aligned pieces", "[arch][dr7]") {
  using R = arch::x86::DebugRange;
  using V = std::vector<R>;
  CHECK(arch::x86::split_debug_range(0x1000, 8) == V{R{0x1000, 8}});
  CHECK(arch::x86::split_debug_range(0x1000, 4) == V{R{0x1000, 4}});
  CHECK(arch::x86::split_debug_range(0x1001, 1) == V{R{0x1001, 1}});
  CHECK(arch::x86::split_debug_range(0x1000, 3) == V{R{0x1000, 2}, R{0x1002, 1}});
  CHECK(arch::x86::split_debug_range(0x1001, 4) == V{R{0x1001, 1}, R{0x1002, 2}, R{0x1004, 1}});
  CHECK(arch::x86::split_debug_range(0x0ffc, 12) == V{R{0x0ffc, 4}, R{0x1000, 8}});
  CHECK(arch::x86::split_debug_range(0x1000, 16) == V{R{0x1000, 8}, R{0x1008, 8}});
  CHECK(arch::x86::split_debug_range(0x1000, 0).empty());
}

TEST_CASE("debug slots: four slots, shared duplicates, exhausted, freed", "[arch][dr7]") {
  DebugSlots slots;
  CHECK(slots.empty());
  CHECK(slots.dr7() == 0);
  CHECK(*slots.insert(DrType::Write, 0x1000, 4) == 1);
  CHECK(*slots.insert(DrType::Write, 0x1000, 4) == 1);  // same watchpoint: shares slot 0
  CHECK(slots.slot(0).refs == 2);
  CHECK(*slots.insert(DrType::Execute, 0x401000, 1) == 1);
  CHECK(*slots.insert(DrType::Access, 0x2000, 8) == 1);
  CHECK(*slots.insert(DrType::Read, 0x3000, 1) == 1);
  auto full = slots.insert(DrType::Write, 0x4000, 4);
  REQUIRE_FALSE(full.ok());
  CHECK(full.error().code == base::Errc::exhausted);
  CHECK(slots.dr7() == (arch::x86::dr7_slot_bits(0, DrType::Write, 4) |
                        arch::x86::dr7_slot_bits(1, DrType::Execute, 1) |
                        arch::x86::dr7_slot_bits(2, DrType::Access, 8) |
                        arch::x86::dr7_slot_bits(3, DrType::Read, 1)));

  // The shared slot survives one remove, frees on the second.
  CHECK(slots.remove(DrType::Write, 0x1000, 4));
  CHECK(slots.slot(0).refs == 1);
  CHECK(slots.remove(DrType::Write, 0x1000, 4));
  CHECK(slots.slot(0).refs == 0);
  CHECK_FALSE(slots.remove(DrType::Write, 0x1000, 4));
  // A different type at the same address is a different watchpoint.
  CHECK_FALSE(slots.remove(DrType::Access, 0x3000, 1));
  CHECK(*slots.insert(DrType::Write, 0x4000, 4) == 1);  // the freed slot is reused
  CHECK(slots.slot(0).addr == 0x4000);
  CHECK((slots.dr7() & 0x55) == 0x55);
}

TEST_CASE("debug slots: a split range takes a slot per piece, all or none", "[arch][dr7]") {
  DebugSlots slots;
  CHECK(*slots.insert(DrType::Write, 0x0ffc, 12) == 2);  // 4 at 0xffc, 8 at 0x1000
  CHECK(slots.slot(0).addr == 0x0ffc);
  CHECK(slots.slot(0).len == 4);
  CHECK(slots.slot(1).addr == 0x1000);
  CHECK(slots.slot(1).len == 8);
  // Three pieces do not fit in the two slots left: nothing is taken.
  auto big = slots.insert(DrType::Access, 0x2001, 4);
  REQUIRE_FALSE(big.ok());
  CHECK(big.error().code == base::Errc::exhausted);
  CHECK(slots.slot(2).refs == 0);
  CHECK(slots.slot(3).refs == 0);
  CHECK(slots.remove(DrType::Write, 0x0ffc, 12));
  CHECK(slots.empty());
  CHECK(*slots.insert(DrType::Access, 0x2001, 4) == 3);
  auto bad = slots.insert(DrType::Execute, 0x401000, 2);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().code == base::Errc::invalid);
}

TEST_CASE("debug slots: DR6 names the slot that fired, only if in use", "[arch][dr7]") {
  DebugSlots slots;
  REQUIRE(slots.insert(DrType::Write, 0x1000, 4).ok());
  REQUIRE(slots.insert(DrType::Access, 0x2000, 4).ok());
  CHECK(slots.triggered(0x0) == std::nullopt);
  CHECK(slots.triggered(arch::x86::kDr6SingleStep) == std::nullopt);
  CHECK(slots.triggered(0x2 | arch::x86::kDr6SingleStep) == 1);
  CHECK(slots.triggered(0x3) == 0);
  CHECK(slots.triggered(0x8) == std::nullopt);  // slot 3 is free
}
