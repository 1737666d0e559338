#include "tracer/inprocess/arena.hpp"

#include <cstdint>
#include <new>

namespace agent_memory {
namespace {

struct Arena {
  std::uint8_t* base;
  std::size_t size;
  std::size_t used = 0;
};

alignas(64) std::uint8_t permanent_bytes[256 * 1024];
alignas(64) std::uint8_t definition_bytes[1024 * 1024];
alignas(64) std::uint8_t scratch_bytes[4 * 1024 * 1024];
Arena arenas[] = {{permanent_bytes, sizeof permanent_bytes},
                  {definition_bytes, sizeof definition_bytes},
                  {scratch_bytes, sizeof scratch_bytes}};
ArenaKind current = ArenaKind::Permanent;

void* allocate(std::size_t n, std::size_t align) {
  Arena& a = arenas[static_cast<int>(current)];
  const std::size_t at = (a.used + align - 1) & ~(align - 1);
  if (at > a.size || a.size - at < n) {
    throw std::bad_alloc();  // (the collector counts the hit lost)
  }
  a.used = at + n;
  return a.base + at;
}

}  // namespace

ArenaScope::ArenaScope(ArenaKind kind) : previous_(current) {
  current = kind;
  if (kind != ArenaKind::Permanent) {
    reset_arena(kind);
  }
}
ArenaScope::~ArenaScope() { current = previous_; }

void reset_arena(ArenaKind kind) { arenas[static_cast<int>(kind)].used = 0; }

}  // namespace agent_memory

// The library's own: agent.map keeps them local, so the program never calls them, and the
// library never calls the program's. Freeing is the arena's reset.

void* operator new(std::size_t n) { return agent_memory::allocate(n, 16); }
void* operator new[](std::size_t n) { return agent_memory::allocate(n, 16); }
void* operator new(std::size_t n, std::align_val_t a) {
  return agent_memory::allocate(n, static_cast<std::size_t>(a));
}
void* operator new[](std::size_t n, std::align_val_t a) {
  return agent_memory::allocate(n, static_cast<std::size_t>(a));
}
void operator delete(void*) noexcept {}
void operator delete[](void*) noexcept {}
void operator delete(void*, std::size_t) noexcept {}
void operator delete[](void*, std::size_t) noexcept {}
void operator delete(void*, std::align_val_t) noexcept {}
void operator delete[](void*, std::align_val_t) noexcept {}
void operator delete(void*, std::size_t, std::align_val_t) noexcept {}
void operator delete[](void*, std::size_t, std::align_val_t) noexcept {}
