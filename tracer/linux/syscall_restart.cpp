#include "tracer/linux/syscall_restart.hpp"

#include <sys/syscall.h>

#include <cstdint>

#include "arch/x86/register_layout.hpp"

namespace tracer {
namespace {

namespace gpr = arch::x86;

constexpr std::int64_t kRestartSys = -512, kRestartNoIntr = -513, kRestartNoHand = -514, kRestartBlock = -516;

}  // namespace

bool interrupted_syscall(const arch::x86::RawRegisters& regs) {
  const auto result = static_cast<std::int64_t>(regs.gpr[gpr::kRax]);
  return static_cast<std::int64_t>(regs.gpr[gpr::kOrigRax]) >= 0 &&
         (result == kRestartSys || result == kRestartNoIntr || result == kRestartNoHand ||
          result == kRestartBlock);
}

void restart_syscall_here(arch::x86::RawRegisters& regs) {
  auto& r = regs.gpr;
  const auto orig = static_cast<std::int64_t>(r[gpr::kOrigRax]);
  const auto result = static_cast<std::int64_t>(r[gpr::kRax]);
  if (orig < 0) {
    return;
  }
  if (result == kRestartSys || result == kRestartNoIntr || result == kRestartNoHand) {
    r[gpr::kRax] = static_cast<std::uint64_t>(orig);
    r[gpr::kRip] -= 2;
  } else if (result == kRestartBlock) {
    r[gpr::kRax] = SYS_restart_syscall;
    r[gpr::kRip] -= 2;
  }
  r[gpr::kOrigRax] = static_cast<std::uint64_t>(-1);
}

}  // namespace tracer
