#include "tracer/symbols/memory_cache.hpp"

#include <algorithm>
#include <cstring>

namespace tracer {

const Bytes& MemoryCache::page(Addr base) {
  auto it = pages_.find(base);
  if (it == pages_.end()) {
    auto bytes = read_(base, kPage);
    it = pages_.emplace(base, bytes ? std::move(*bytes) : Bytes{}).first;
  }
  return it->second;
}

Bytes MemoryCache::read_prefix(Addr addr, std::size_t len) {
  Bytes out;
  while (out.size() < len) {
    const Addr at = addr + out.size();
    const Addr base = at & ~(kPage - 1);
    const Bytes& p = page(base);
    const std::size_t offset = at - base;
    if (offset >= p.size()) {
      break;
    }
    const std::size_t n = std::min<std::size_t>(len - out.size(), p.size() - offset);
    out.insert(out.end(), p.begin() + static_cast<std::ptrdiff_t>(offset),
               p.begin() + static_cast<std::ptrdiff_t>(offset + n));
  }
  return out;
}

bool MemoryCache::read(Addr addr, void* out, std::size_t len) {
  Bytes bytes = read_prefix(addr, len);
  if (bytes.size() != len) {
    return false;
  }
  std::memcpy(out, bytes.data(), len);
  return true;
}

}  // namespace tracer
