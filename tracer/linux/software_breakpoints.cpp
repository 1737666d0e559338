// Bookkeeping of inserted int3 bytes (Z0/z0) and their effect on memory reads and writes.
#include "tracer/linux/software_breakpoints.hpp"

namespace tracer {

std::optional<std::uint8_t> SoftwareBreakpoints::original(Addr addr) const {
  auto it = sites_.find(addr);
  if (it == sites_.end()) {
    return std::nullopt;
  }
  return it->second.original;
}

bool SoftwareBreakpoints::add(Addr addr, std::uint8_t original, SiteOwner owner) {
  auto [it, added] = sites_.try_emplace(addr, Site{original, 0});
  it->second.owners |= static_cast<std::uint8_t>(owner);
  return added;
}

std::optional<std::uint8_t> SoftwareBreakpoints::release(Addr addr, SiteOwner owner) {
  auto it = sites_.find(addr);
  if (it == sites_.end() || (it->second.owners & static_cast<std::uint8_t>(owner)) == 0) {
    return std::nullopt;
  }
  it->second.owners &= static_cast<std::uint8_t>(~static_cast<std::uint8_t>(owner));
  if (it->second.owners != 0) {
    return std::nullopt;  // another owner still wants the int3
  }
  std::uint8_t original = it->second.original;
  sites_.erase(it);
  return original;
}

bool SoftwareBreakpoints::owned_by(Addr addr, SiteOwner owner) const {
  auto it = sites_.find(addr);
  return it != sites_.end() && (it->second.owners & static_cast<std::uint8_t>(owner)) != 0;
}

void SoftwareBreakpoints::hide(Addr addr, Bytes& data) const {
  if (data.empty()) {
    return;
  }
  const Addr end = addr + data.size();
  for (auto it = sites_.lower_bound(addr); it != sites_.end() && it->first < end; ++it) {
    // Only where our int3 still is: code unmapped and mapped again shows its own bytes.
    if (data[it->first - addr] == kInt3) {
      data[it->first - addr] = it->second.original;
    }
  }
}

SoftwareBreakpoints::Replaced SoftwareBreakpoints::absorb_write(Addr addr, Bytes& data) {
  Replaced replaced;
  if (data.empty()) {
    return replaced;
  }
  const Addr end = addr + data.size();
  for (auto it = sites_.lower_bound(addr); it != sites_.end() && it->first < end; ++it) {
    replaced.emplace_back(it->first, it->second.original);
    it->second.original = data[it->first - addr];
    data[it->first - addr] = kInt3;
  }
  return replaced;
}

void SoftwareBreakpoints::undo_absorb(const Replaced& replaced) {
  for (const auto& [addr, original] : replaced) {
    if (auto it = sites_.find(addr); it != sites_.end()) {
      it->second.original = original;
    }
  }
}

}  // namespace tracer
