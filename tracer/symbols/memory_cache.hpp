// A stopped process's memory read a page at a time, for the unwinder and the history folder,
// which ask for the same few pages word by word (each Target read may be a round trip).
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <utility>

#include "tracer/target.hpp"

namespace tracer {

class MemoryCache {
 public:
  using ReadMemory = std::function<base::Result<Bytes>(Addr, std::size_t)>;
  explicit MemoryCache(Target& target)
      : read_([&target](Addr addr, std::size_t len) { return target.read_memory(addr, len); }) {}
  // Memory from elsewhere (a dead process's code, from the files it had mapped).
  explicit MemoryCache(ReadMemory read) : read_(std::move(read)) {}
  // All of [addr, addr+len) or false.
  bool read(Addr addr, void* out, std::size_t len);
  // Up to len bytes from addr (fewer where the mapping ends).
  Bytes read_prefix(Addr addr, std::size_t len);

 private:
  static constexpr Addr kPage = 4096;
  const Bytes& page(Addr base);

  ReadMemory read_;
  std::map<Addr, Bytes> pages_;  // by page address; shorter than a page where reading stopped
};

}  // namespace tracer
