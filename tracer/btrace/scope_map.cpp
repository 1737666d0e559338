// ScopeMap: the memory map, one lookup per mapping.
#include "tracer/btrace/scope_map.hpp"

namespace tracer {

bool ScopeMap::contains(Addr addr, CollectorHost& host) {
  if (scope_.all) {
    return true;
  }
  if (auto it = ranges_.upper_bound(addr); it != ranges_.begin()) {
    --it;
    if (addr < it->second.end) {
      return it->second.in;
    }
  }
  auto mapped = host.mapped_object(addr);
  if (!mapped) {
    return true;
  }
  if (!exe_) {
    exe_ = host.executable();
  }
  const bool in = scope_.covers(mapped->path, *exe_);
  ranges_[mapped->start] = Range{mapped->end, in};
  return in;
}

}  // namespace tracer
