// Registers of one ptrace-stopped thread: user_regs_struct (PTRACE_GETREGS/SETREGS) plus the
// XSAVE area (PTRACE_GETREGSET/SETREGSET NT_X86_XSTATE), sized from CPUID leaf 0xD, and the
// `g`/`p`/target.xml views built on arch::x86.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "arch/x86/raw_registers.hpp"
#include "arch/x86/register_layout.hpp"
#include "base/result.hpp"
#include "tracer/linux/kernel.hpp"

namespace tracer {

using arch::x86::RawRegisters;

// CPUID leaf 0xD + XGETBV: XCR0, XSAVE size (EBX of subleaf 0) and component offsets.
// Without OSXSAVE: the 512-byte FXSAVE geometry.
arch::x86::XsaveGeometry probe_xsave_geometry();

// probe_xsave_geometry(), asked once.
const arch::x86::XsaveGeometry& host_xsave_geometry();
// The register layout of this CPU for a program of that instruction set, computed once (it
// depends only on the CPU, the kernel and the instruction set).
const arch::x86::RegisterLayout& host_register_layout(arch::x86::Isa isa);

// PTRACE_GETREGS + PTRACE_GETREGSET NT_X86_XSTATE (PTRACE_GETFPREGS without XSAVE).
base::Result<RawRegisters> read_raw_registers(int tid);
// Each half of it: the general registers into raw.gpr, the XSAVE area into raw.xsave.
base::Result<void> read_gpr_registers(int tid, RawRegisters& raw);
base::Result<void> read_xstate_registers(int tid, RawRegisters& raw);

// PTRACE_SETREGS always; the XSAVE area (SETREGSET NT_X86_XSTATE) only if xstate_changed.
// `raw.xsave` must be the buffer read_raw_registers returned (the kernel wants its full size).
base::Result<void> write_raw_registers(int tid, const RawRegisters& raw, bool xstate_changed);

// The registers of one stopped thread, asked of its kernel (kernel.hpp) once per stop: PTRACE_GETREGS at
// the first question, the XSAVE area at the first question that needs it. Writes go through to
// the kernel at once. forget() whenever the thread may have run (a resume, a new stop). As in
// gdbserver, what was read at a stop still answers once the thread died under us (SIGKILL
// from outside), so GDB gets to resume it and hear how it ended.
class RegisterCache {
 public:
  explicit RegisterCache(Kernel& kernel = linux_kernel()) : kernel_(&kernel) {}
  base::Result<const RawRegisters*> gprs(int tid);
  base::Result<const RawRegisters*> all(int tid);
  base::Result<uint64_t> pc(int tid);
  base::Result<void> set_pc(int tid, uint64_t pc);
  // Writes raw (from gprs() or all(), changed) to the thread.
  base::Result<void> store(int tid, const RawRegisters& raw, bool xstate_changed);
  void forget() { have_gprs_ = have_xstate_ = false; }

 private:
  Kernel* kernel_;
  RawRegisters raw_;
  bool have_gprs_ = false;
  bool have_xstate_ = false;
};

// The views below number registers by `layout` (host_register_layout of the thread's
// instruction set).
// `g`: all registers in target.xml order.
base::Result<std::vector<uint8_t>> read_g_registers(const arch::x86::RegisterLayout& layout, int tid,
                                                    RegisterCache& cache);
// `G`: a full or prefix register block.
base::Result<void> write_g_registers(const arch::x86::RegisterLayout& layout, int tid, RegisterCache& cache,
                                     const std::vector<uint8_t>& g);
// `p`: one register by GDB regnum.
base::Result<std::vector<uint8_t>> read_one_register(const arch::x86::RegisterLayout& layout, int tid,
                                                     RegisterCache& cache, int regno);
// `P`: one register by GDB regnum; value must be the register's size.
base::Result<void> write_one_register(const arch::x86::RegisterLayout& layout, int tid, RegisterCache& cache,
                                      int regno, const std::vector<uint8_t>& value);
// qXfer:features:read:target.xml, consistent with host_register_layout(isa). No ptrace: GDB
// may ask while the threads run (non-stop attach).
std::string target_description_xml(arch::x86::Isa isa);

// rip (eip) via PTRACE_PEEKUSER / PTRACE_POKEUSER (orig_rax is left alone).
base::Result<uint64_t> read_pc(int tid);
base::Result<void> write_pc(int tid, uint64_t pc);

}  // namespace tracer
