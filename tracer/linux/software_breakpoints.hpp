// Our int3 bytes: which addresses carry one, what byte they replaced, and how reads and
// writes of inferior memory see through them. Pure bookkeeping; the caller does the I/O.
#pragma once

#include <cstdint>
#include <map>
#include <optional>

#include "tracer/types.hpp"

namespace tracer {

inline constexpr std::uint8_t kInt3 = 0xCC;

class SoftwareBreakpoints {
 public:
  struct Site {
    std::uint8_t original = 0;
  };

  bool contains(Addr addr) const { return sites_.count(addr) != 0; }
  bool empty() const { return sites_.empty(); }
  const std::map<Addr, Site>& sites() const { return sites_; }
  std::optional<std::uint8_t> original(Addr addr) const;

  // Records a site; returns false if it was already there (GDB may send Z0 twice, and
  // like gdbserver we keep one breakpoint: a single z0 removes it).
  bool add(Addr addr, std::uint8_t original);
  // Forgets a site; returns the original byte to put back, nothing if there was none.
  std::optional<std::uint8_t> release(Addr addr);
  void clear() { sites_.clear(); }

  // Replaces our int3s inside [addr, addr + data.size()) with the original bytes.
  void hide(Addr addr, Bytes& data) const;
  // For a write of data at addr: remembers the new bytes under our sites as their
  // originals and puts int3 back into data so the breakpoints stay in place.
  void absorb_write(Addr addr, Bytes& data);

 private:
  std::map<Addr, Site> sites_;
};

}  // namespace tracer
