// Our int3 bytes: which addresses carry one, what byte they replaced, who wants it there
// (GDB's Z0, a history collector, a range step), and how reads and writes of inferior memory see through
// them. Pure bookkeeping; the caller does the I/O.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "tracer/types.hpp"

namespace tracer {

inline constexpr std::uint8_t kInt3 = 0xCC;

// Who placed an int3 (a bit each): the byte goes back only when the last owner lets go.
// Range: where a range-stepping thread runs to (range_run.cpp). Tracepoint: a running trace
// experiment's (tracepoints.cpp).
enum class SiteOwner : std::uint8_t { Gdb = 1, Collector = 2, Range = 4, Tracepoint = 8 };

class SoftwareBreakpoints {
 public:
  struct Site {
    std::uint8_t original = 0;
    std::uint8_t owners = 0;  // SiteOwner bits
  };

  bool contains(Addr addr) const { return sites_.count(addr) != 0; }
  bool empty() const { return sites_.empty(); }
  const std::map<Addr, Site>& sites() const { return sites_; }
  std::optional<std::uint8_t> original(Addr addr) const;

  // Records owner's claim on a site; returns false if the site was already there (the int3
  // is in memory). GDB may send Z0 twice; like gdbserver we keep one claim per owner, so a
  // single z0 removes GDB's.
  bool add(Addr addr, std::uint8_t original, SiteOwner owner = SiteOwner::Gdb);
  // Drops owner's claim; returns the original byte to put back when no owner is left.
  std::optional<std::uint8_t> release(Addr addr, SiteOwner owner = SiteOwner::Gdb);
  bool owned_by(Addr addr, SiteOwner owner) const;
  void clear() { sites_.clear(); }

  // Replaces our int3s inside [addr, addr + data.size()) with the original bytes (where data
  // still holds an int3 there).
  void hide(Addr addr, Bytes& data) const;
  // For a write of data at addr: remembers the new bytes under our sites as their
  // originals and puts int3 back into data so the breakpoints stay in place. Returns the
  // originals it replaced, for undo_absorb when the write fails.
  using Replaced = std::vector<std::pair<Addr, std::uint8_t>>;
  Replaced absorb_write(Addr addr, Bytes& data);
  void undo_absorb(const Replaced& replaced);

 private:
  std::map<Addr, Site> sites_;
};

}  // namespace tracer
