// The debug registers of traced threads: what every thread should hold (from the Z1-Z4 slots)
// and the PTRACE_PEEKUSER / POKEUSER calls that put it there. Threads are brought up to date
// lazily, right before they run, so GDB's z/Z churn around each stop costs nothing per thread.
#pragma once

#include <array>
#include <cstdint>

#include "arch/x86/debug_registers.hpp"
#include "base/result.hpp"
#include "tracer/types.hpp"

namespace tracer {
class Kernel;
}

namespace tracer {

// DR7 and DR0-DR3 as last written to one thread (all zero: never armed).
struct DrValues {
  std::uint64_t dr7 = 0;
  std::array<std::uint64_t, arch::x86::kDebugSlots> addr{};
  bool operator==(const DrValues&) const = default;
};

// The values the slots ask for.
DrValues dr_values(const arch::x86::DebugSlots& slots);

namespace pt {
// PTRACE_PEEKUSER / PTRACE_POKEUSER of u_debugreg[i].
base::Result<std::uint64_t> get_debugreg(Tid tid, int i);
base::Result<void> set_debugreg(Tid tid, int i, std::uint64_t value);
}  // namespace pt

// Writes want to the thread whose registers hold have (DR7 off first, then addresses, then
// DR7), and updates have.
base::Result<void> write_debug_registers(Kernel& kernel, Tid tid, DrValues& have, const DrValues& want);

}  // namespace tracer
