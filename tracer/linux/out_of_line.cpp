// Passing a breakpoint whose condition is false (or whose commands ran) without a second stop:
// the thread runs a copy of the instruction under the int3 in a slot that jumps back after it
// (arch/x86/out_of_line.hpp). The int3 stays, so the other threads run on; stepping over in
// place would stop them all, then single-step. Slots live in the unused end of the program's
// last page of code (its r-x mapping, page-rounded, reaches past the code), written once per
// breakpoint. An instruction that cannot run elsewhere (a branch, a syscall, a rip-relative
// operand too far from the slot: one in a library, say), a full tail, or a thread whose
// history a collector records (the slot is no branch of the program's): stepped over in
// place, as before.
//
// A thread seen stopped inside a slot (a signal, our SIGSTOP, a fault of the copy) shows GDB
// the pc of the original: the breakpoint, if the copy has not run (it runs in the slot when the
// thread resumes there, so the breakpoint is not hit twice), else the instruction after it.
#include "arch/x86/instruction_length.hpp"
#include "base/log.hpp"
#include "tracer/linux/code_view.hpp"
#include "tracer/linux/linux_target.hpp"
#include "tracer/linux/svr4_libraries.hpp"
#include "arch/x86/out_of_line.hpp"

namespace tracer {
namespace {

constexpr Addr kPageSize = 4096;

// [end of the program's code, end of that page): mapped executable, never run by the program.
std::pair<Addr, Addr> free_code_tail(Process& p) {
  auto auxv = p.kernel.auxv(p.pid);
  if (!auxv) {
    return {0, 0};
  }
  auto program = svr4::read_main_program([&p](Addr addr, std::size_t len) { return p.code.read(addr, len); }, *auxv,
                                          arch::x86::register_roles(p.isa).word_bytes);
  if (!program || !*program || (*program)->headers.code_end == 0) {
    return {0, 0};
  }
  const Addr start = (*program)->bias + (*program)->headers.code_end;
  return {start, (start + kPageSize - 1) & ~(kPageSize - 1)};
}

OutOfLine::Slot make_slot(Process& p, Addr addr) {
  OutOfLine& ool = p.code.out_of_line();
  if (!ool.looked) {
    ool.looked = true;
    std::tie(ool.begin, ool.end) = free_code_tail(p);
    ool.next = ool.begin;
    base::logf(base::LogCat::ptrace, "process {}: out-of-line slots in [{:#x}, {:#x})", p.pid, ool.begin, ool.end);
  }
  auto code = p.code.read(addr, arch::x86::kMaxInstructionLength);  // (our int3s hidden)
  if (!code) {
    return {};
  }
  const auto slot = arch::x86::out_of_line_slot(*code, addr, ool.next, p.isa);
  if (!slot || ool.end - ool.next < slot->bytes.size() || !p.code.write_slot(ool.next, slot->bytes)) {
    return {};
  }
  const OutOfLine::Slot made{ool.next, slot->length};
  ool.next += slot->bytes.size();
  return made;
}

}  // namespace

bool LinuxTarget::step_over_out_of_line(Process& p, LinuxThread& t, Addr addr) {
  if (p.collector && p.collector->tracing(t.tid)) {
    return false;
  }
  auto [it, fresh] = p.code.out_of_line().slots.try_emplace(addr);
  if (fresh) {
    it->second = make_slot(p, addr);
  }
  return it->second.at != 0 && t.regs.set_pc(t.tid, it->second.at).ok();
}

void LinuxTarget::leave_out_of_line(Process& p, LinuxThread& t) {
  const OutOfLine& ool = p.code.out_of_line();
  if (t.stop_pc < ool.begin || t.stop_pc >= ool.next) {
    return;
  }
  for (const auto& [addr, slot] : ool.slots) {
    if (slot.at == 0) {
      continue;
    }
    Addr shown = 0;
    if (t.stop_pc == slot.at) {
      shown = addr;
      t.out_of_line_from = addr;
    } else if (t.stop_pc == slot.at + slot.length) {
      shown = addr + slot.length;
    } else {
      continue;
    }
    base::logf(base::LogCat::ptrace, "thread {}: stopped in the slot of {:#x}: pc {:#x}", t.tid, addr, shown);
    if (t.regs.set_pc(t.tid, shown)) {
      t.stop_pc = shown;
    }
    return;
  }
}

void LinuxTarget::reenter_out_of_line(Process& p, LinuxThread& t) {
  const Addr addr = std::exchange(t.out_of_line_from, 0);
  auto pc = t.regs.pc(t.tid);
  const auto& slots = p.code.out_of_line().slots;
  auto it = slots.find(addr);
  if (!pc || *pc != addr || it == slots.end() || it->second.at == 0 || !p.code.contains(addr)) {
    return;  // GDB moved it, or the breakpoint is gone: it runs from where it is
  }
  if (p.collector && p.collector->tracing(t.tid)) {
    return;  // (recording began meanwhile: it meets the breakpoint again, which is evaluated again)
  }
  (void)t.regs.set_pc(t.tid, it->second.at);
}

}  // namespace tracer
