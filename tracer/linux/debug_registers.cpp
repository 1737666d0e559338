// Hardware breakpoints and watchpoints (Z1-Z4) through DR0-DR3, DR6 and DR7 of every thread.
#include "tracer/linux/debug_registers.hpp"

#include <sys/ptrace.h>
#include <sys/user.h>

#include <cerrno>
#include <cstddef>
#include <cstring>

#include "base/log.hpp"
#include "tracer/linux/linux_target.hpp"
#include "tracer/linux/ptrace_calls.hpp"

namespace tracer {
namespace {

using arch::x86::DrType;

std::size_t debugreg_offset(int i) {
  return offsetof(struct user, u_debugreg) + static_cast<std::size_t>(i) * sizeof(long);
}

DrType dr_type(BreakpointType type) {
  switch (type) {
    case BreakpointType::Hardware: return DrType::Execute;
    case BreakpointType::WriteWatch: return DrType::Write;
    case BreakpointType::ReadWatch: return DrType::Read;
    default: return DrType::Access;
  }
}

}  // namespace

DrValues dr_values(const arch::x86::DebugSlots& slots) {
  DrValues v;
  v.dr7 = slots.dr7();
  for (int i = 0; i < arch::x86::kDebugSlots; ++i) {
    if (slots.slot(i).refs > 0) {
      v.addr[static_cast<std::size_t>(i)] = slots.slot(i).addr;
    }
  }
  return v;
}

namespace pt {

base::Result<std::uint64_t> get_debugreg(Tid tid, int i) {
  errno = 0;
  long v = ::ptrace(PTRACE_PEEKUSER, tid, debugreg_offset(i), nullptr);
  if (errno != 0) {
    return base::sys_error("PTRACE_PEEKUSER DR" + std::to_string(i) + " of " + std::to_string(tid));
  }
  return static_cast<std::uint64_t>(v);
}

base::Result<void> set_debugreg(Tid tid, int i, std::uint64_t value) {
  base::logf(base::LogCat::ptrace, "ptrace(POKEUSER, {}, DR{}, {:#x})", tid, i, value);
  if (::ptrace(PTRACE_POKEUSER, tid, debugreg_offset(i), value) != 0) {
    return base::sys_error("PTRACE_POKEUSER DR" + std::to_string(i) + " of " + std::to_string(tid));
  }
  return base::success();
}

}  // namespace pt

base::Result<void> write_debug_registers(Kernel& kernel, Tid tid, DrValues& have, const DrValues& want) {
  if (have == want) {
    return base::success();
  }
  if (have.dr7 != 0) {
    if (auto res = kernel.set_debugreg(tid, 7, 0); !res) {
      return res;
    }
    have.dr7 = 0;
  }
  for (int i = 0; i < arch::x86::kDebugSlots; ++i) {
    const auto k = static_cast<std::size_t>(i);
    if ((want.dr7 & (3ull << (2 * i))) != 0 && have.addr[k] != want.addr[k]) {
      if (auto res = kernel.set_debugreg(tid, i, want.addr[k]); !res) {
        return res;
      }
      have.addr[k] = want.addr[k];
    }
  }
  if (want.dr7 != 0) {
    if (auto res = kernel.set_debugreg(tid, 7, want.dr7); !res) {
      return res;
    }
  }
  have.dr7 = want.dr7;
  return base::success();
}

// --- LinuxTarget: Z1-Z4, per address space ---------------------------------------------------

Result<void> LinuxTarget::insert_debug_point(Process& p, BreakpointType type, Addr addr, int len) {
  arch::x86::DebugSlots before = p.dr_slots;
  if (auto pieces = p.dr_slots.insert(dr_type(type), addr, len); !pieces) {
    return std::move(pieces).error();
  }
  // Arm one stopped thread now so that an address the kernel refuses fails the Z packet;
  // the others follow when they next run.
  if (LinuxThread* t = p.any_stopped()) {
    if (auto res = write_debug_registers(kernel_, t->tid, t->dr, dr_values(p.dr_slots)); !res) {
      p.dr_slots = before;
      (void)write_debug_registers(kernel_, t->tid, t->dr, dr_values(p.dr_slots));
      return res;
    }
  }
  if (type == BreakpointType::ReadWatch) {
    refresh_read_watches(p);
  }
  return base::success();
}

Result<void> LinuxTarget::remove_debug_point(Process& p, BreakpointType type, Addr addr, int len) {
  (void)p.dr_slots.remove(dr_type(type), addr, len);
  return base::success();
}

void LinuxTarget::sync_debug_registers(Process& p, LinuxThread& t) {
  if (auto res = write_debug_registers(kernel_, t.tid, t.dr, dr_values(p.dr_slots)); !res) {
    base::logf(base::LogCat::ptrace, "debug registers of {}: {}", t.tid, res.error().message());
  }
}

void LinuxTarget::clear_debug_registers(Process& p) {
  p.dr_slots = arch::x86::DebugSlots{};
  for (auto& [tid, t] : p.threads) {
    if (t.stopped()) {
      (void)write_debug_registers(kernel_, tid, t.dr, DrValues{});
    }
  }
}

// A read watchpoint is armed for any access; the value it saw last tells a write (changed:
// not reported) from a read. Called whenever the threads are stopped.
void LinuxTarget::refresh_read_watches(Process& p) {
  for (int i = 0; i < arch::x86::kDebugSlots; ++i) {
    const auto& s = p.dr_slots.slot(i);
    if (s.refs > 0 && s.type == DrType::Read) {
      if (auto now = p.code.read(s.addr, static_cast<std::size_t>(s.len));
          now && now->size() == static_cast<std::size_t>(s.len)) {
        p.read_watch_values[static_cast<std::size_t>(i)] = load_u64(*now);
      }
    }
  }
}

LinuxTarget::DebugTrap LinuxTarget::debug_trap(Process& p, LinuxThread& t) {
  DebugTrap out;
  if (t.dr.dr7 == 0) {
    return out;
  }
  auto dr6 = kernel_.get_debugreg(t.tid, 6);
  if (!dr6 || (*dr6 & arch::x86::kDr6SlotMask) == 0) {
    return out;
  }
  (void)kernel_.set_debugreg(t.tid, 6, 0);
  // Several slots may have hit at once (a read and a write watchpoint on one variable): the
  // first that is to be reported is, after each read watchpoint that saw a write is passed.
  std::optional<int> slot;
  bool writes_under_rwatch = false;
  std::optional<int> written;  // a read slot that saw its bytes change: a write hit it
  StopEvent ev{StopReason::Watchpoint, p.pid, t.tid, SIGTRAP};
  for (int i = 0; i < arch::x86::kDebugSlots && !slot; ++i) {
    const auto& s = p.dr_slots.slot(i);
    if (s.refs == 0 || (*dr6 & (1ull << i)) == 0) {
      continue;  // not hit, or a slot GDB has removed since: nothing to report for it
    }
    ev.watch_addr = s.addr;
    switch (s.type) {
      case DrType::Execute: ev.reason = StopReason::HardwareBreakpoint; break;
      case DrType::Write: ev.watch_kind = WatchKind::Write; break;
      case DrType::Access: ev.watch_kind = WatchKind::Access; break;
      case DrType::Read: {
        ev.watch_kind = WatchKind::Read;
        auto now = p.code.read(s.addr, static_cast<std::size_t>(s.len));
        auto& saved = p.read_watch_values[static_cast<std::size_t>(i)];
        base::logf(base::LogCat::ptrace, "thread {}: read watch {} at {:#x}: saw {:#x}, now {:#x}", t.tid, i, s.addr,
                   saved, now && now->size() == static_cast<std::size_t>(s.len) ? load_u64(*now) : 0);
        if (now && now->size() == static_cast<std::size_t>(s.len) && load_u64(*now) != saved) {
          saved = load_u64(*now);  // a write, not a read
          writes_under_rwatch = true;
          written = i;
          continue;
        }
        break;
      }
    }
    slot = i;
  }
  if (!slot && written) {
    // The write that hit the read slot hit every write or access slot over the same bytes too;
    // some CPUs (QEMU's TCG) set only the first slot's bit in DR6: report the one that watches
    // writes, as DR6 would have on hardware.
    const auto& r = p.dr_slots.slot(*written);
    for (int i = 0; i < arch::x86::kDebugSlots && !slot; ++i) {
      const auto& s = p.dr_slots.slot(i);
      const bool watches_writes = s.type == DrType::Write || s.type == DrType::Access;
      if (s.refs > 0 && watches_writes && s.addr < r.addr + static_cast<Addr>(r.len) &&
          r.addr < s.addr + static_cast<Addr>(s.len)) {
        ev.watch_addr = s.addr;
        ev.watch_kind = s.type == DrType::Write ? WatchKind::Write : WatchKind::Access;
        slot = i;
      }
    }
  }
  if (!slot) {
    out.kind = writes_under_rwatch ? DebugTrap::Kind::Ignored : DebugTrap::Kind::None;
    return out;
  }
  const auto& s = p.dr_slots.slot(*slot);
  base::logf(base::LogCat::ptrace, "thread {}: DR6 {:#x}, slot {} at {:#x}", t.tid, *dr6, *slot, s.addr);
  out.kind = DebugTrap::Kind::Report;
  out.event = ev;
  return out;
}

}  // namespace tracer
