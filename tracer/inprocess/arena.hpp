// The agent's memory: it runs inside the program, at any instruction a fast tracepoint names,
// perhaps inside malloc. So nothing it does allocates from the program's heap: the agent's own
// operator new (hidden, bound inside the library) takes from fixed arenas instead. Collection
// holds the agent's lock, so one arena serves all threads.
#pragma once

#include <cstddef>

namespace agent_memory {

enum class ArenaKind { Permanent, Definitions, Scratch };

// Allocations go to `kind` until the scope ends; Definitions and Scratch start empty.
class ArenaScope {
 public:
  explicit ArenaScope(ArenaKind kind);
  ~ArenaScope();
  ArenaScope(const ArenaScope&) = delete;
  ArenaScope& operator=(const ArenaScope&) = delete;

 private:
  ArenaKind previous_;
};

// Forgets what an arena holds (the definitions, before they are read again).
void reset_arena(ArenaKind kind);

}  // namespace agent_memory
