// DR7 layout: L0..L3 at bits 0, 2, 4, 6; for slot i, R/W at 16+4i and LEN at 18+4i.
#include "arch/x86/debug_registers.hpp"

#include <string>

namespace arch::x86 {
namespace {

std::uint64_t rw_bits(DrType type) {
  switch (type) {
    case DrType::Execute: return 0b00;
    case DrType::Write: return 0b01;
    case DrType::Read:
    case DrType::Access: return 0b11;
  }
  return 0b11;
}

// LEN encodes 1, 2, 8, 4 bytes as 00, 01, 10, 11.
std::uint64_t len_bits(int len) {
  switch (len) {
    case 2: return 0b01;
    case 8: return 0b10;
    case 4: return 0b11;
    default: return 0b00;
  }
}

}  // namespace

base::Result<void> check_debug_range(DrType type, std::uint64_t addr, int len) {
  if (type == DrType::Execute) {
    if (len != 1) {
      return base::make_error(base::Errc::invalid,
                              "hardware breakpoint length " + std::to_string(len) + " (want 1)");
    }
    return base::success();
  }
  if (len != 1 && len != 2 && len != 4 && len != 8) {
    return base::make_error(base::Errc::invalid,
                            "watchpoint length " + std::to_string(len) + " (want 1, 2, 4 or 8)");
  }
  if (addr % static_cast<std::uint64_t>(len) != 0) {
    return base::make_error(base::Errc::invalid, "watchpoint address not aligned to its length");
  }
  return base::success();
}

std::uint64_t dr7_slot_bits(int slot, DrType type, int len) {
  const int i = slot;
  const std::uint64_t rw = type == DrType::Execute ? 0 : rw_bits(type);
  const std::uint64_t ln = type == DrType::Execute ? 0 : len_bits(len);
  return (1ull << (2 * i)) | (rw << (16 + 4 * i)) | (ln << (18 + 4 * i));
}

std::vector<DebugRange> split_debug_range(std::uint64_t addr, int len) {
  std::vector<DebugRange> out;
  while (len > 0) {
    int size = 8;
    while (size > 1 && (addr % static_cast<std::uint64_t>(size) != 0 || size > len)) {
      size /= 2;
    }
    out.push_back(DebugRange{addr, size});
    addr += static_cast<std::uint64_t>(size);
    len -= size;
  }
  return out;
}

base::Result<int> DebugSlots::insert(DrType type, std::uint64_t addr, int len) {
  if (type == DrType::Execute || len <= 0) {
    if (auto ok = insert_piece(type, addr, len); !ok) {
      return ok.error();
    }
    return 1;
  }
  const auto pieces = split_debug_range(addr, len);
  const DebugSlots before = *this;
  for (const auto& p : pieces) {
    if (auto ok = insert_piece(type, p.addr, p.len); !ok) {
      *this = before;
      return ok.error();
    }
  }
  return static_cast<int>(pieces.size());
}

bool DebugSlots::remove(DrType type, std::uint64_t addr, int len) {
  if (type == DrType::Execute || len <= 0) {
    return remove_piece(type, addr, len).has_value();
  }
  bool any = false;
  for (const auto& p : split_debug_range(addr, len)) {
    any = remove_piece(type, p.addr, p.len).has_value() || any;
  }
  return any;
}

base::Result<int> DebugSlots::insert_piece(DrType type, std::uint64_t addr, int len) {
  if (auto ok = check_debug_range(type, addr, len); !ok) {
    return ok.error();
  }
  int free_slot = -1;
  for (int i = 0; i < kDebugSlots; ++i) {
    DebugSlot& s = slots_[static_cast<std::size_t>(i)];
    if (s.refs > 0 && s.type == type && s.addr == addr && s.len == len) {
      ++s.refs;
      return i;
    }
    if (s.refs == 0 && free_slot < 0) {
      free_slot = i;
    }
  }
  if (free_slot < 0) {
    return base::make_error(base::Errc::exhausted, "all 4 debug registers are in use");
  }
  slots_[static_cast<std::size_t>(free_slot)] = DebugSlot{addr, len, type, 1};
  return free_slot;
}

std::optional<int> DebugSlots::remove_piece(DrType type, std::uint64_t addr, int len) {
  for (int i = 0; i < kDebugSlots; ++i) {
    DebugSlot& s = slots_[static_cast<std::size_t>(i)];
    if (s.refs > 0 && s.type == type && s.addr == addr && s.len == len) {
      if (--s.refs == 0) {
        s = DebugSlot{};
      }
      return i;
    }
  }
  return std::nullopt;
}

std::uint64_t DebugSlots::dr7() const {
  std::uint64_t out = 0;
  for (int i = 0; i < kDebugSlots; ++i) {
    const DebugSlot& s = slots_[static_cast<std::size_t>(i)];
    if (s.refs > 0) {
      out |= dr7_slot_bits(i, s.type, s.len);
    }
  }
  return out;
}

bool DebugSlots::empty() const {
  for (const auto& s : slots_) {
    if (s.refs > 0) {
      return false;
    }
  }
  return true;
}

std::optional<int> DebugSlots::triggered(std::uint64_t dr6) const {
  for (int i = 0; i < kDebugSlots; ++i) {
    if (slots_[static_cast<std::size_t>(i)].refs > 0 && (dr6 & (1ull << i)) != 0) {
      return i;
    }
  }
  return std::nullopt;
}

}  // namespace arch::x86
