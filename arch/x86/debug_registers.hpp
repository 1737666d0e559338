// x86 debug registers DR0-DR3, DR6, DR7: slot allocation, length/alignment rules and the DR7
// encoding (Intel SDM vol. 3, 18.2). Pure: tracer/linux pokes the values through ptrace.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "base/result.hpp"

namespace arch::x86 {

inline constexpr int kDebugSlots = 4;

// What a slot watches. Read is armed as Access (RW=11): x86 cannot trap reads alone, so the
// tracer tells reads from writes by comparing the watched value (docs/protocol.md, Z3).
enum class DrType { Execute, Write, Read, Access };

struct DebugSlot {
  std::uint64_t addr = 0;
  int len = 0;
  DrType type = DrType::Execute;
  int refs = 0;  // 0: free
};

// What one slot can watch: Z1 takes length 1; a watch slot 1, 2, 4 or 8 bytes at an address
// aligned to that length.
base::Result<void> check_debug_range(DrType type, std::uint64_t addr, int len);

struct DebugRange {
  std::uint64_t addr = 0;
  int len = 0;
  bool operator==(const DebugRange&) const = default;
};
// A watched range as aligned pieces, largest first where alignment allows (GDB sends any
// length to a remote target; gdbserver splits the same way). Empty for len <= 0.
std::vector<DebugRange> split_debug_range(std::uint64_t addr, int len);

// The DR7 bits that arm one slot: local enable, R/W and LEN fields.
std::uint64_t dr7_slot_bits(int slot, DrType type, int len);

// DR6 bits B0-B3 (which slot fired) and BS (single step).
inline constexpr std::uint64_t kDr6SlotMask = 0xf;
inline constexpr std::uint64_t kDr6SingleStep = 1u << 14;

// The four slots as GDB's Z/z packets fill them. A range takes one slot per aligned piece;
// the same piece inserted twice shares its slot, and each insert needs one remove.
class DebugSlots {
 public:
  // Takes slots for every piece or none: Errc::exhausted when they do not fit,
  // Errc::invalid for a bad range. Returns how many pieces.
  base::Result<int> insert(DrType type, std::uint64_t addr, int len);
  // Releases the pieces of the range; false when nothing matched.
  bool remove(DrType type, std::uint64_t addr, int len);
  // DR7 for every slot in use.
  std::uint64_t dr7() const;
  bool empty() const;
  const DebugSlot& slot(int i) const { return slots_[static_cast<std::size_t>(i)]; }
  // The lowest slot in use whose DR6 bit is set, if any.
  std::optional<int> triggered(std::uint64_t dr6) const;

 private:
  base::Result<int> insert_piece(DrType type, std::uint64_t addr, int len);
  std::optional<int> remove_piece(DrType type, std::uint64_t addr, int len);

  std::array<DebugSlot, kDebugSlots> slots_{};
};

}  // namespace arch::x86
