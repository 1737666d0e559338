// The server's part in rseq critical sections the in-process recorder runs as copies (the
// recorder's part: recorder/rseq_sections.hpp). It tells the recorder where each thread's
// rseq_cs word is; gives a thread moved out of a copy the program's word back, so that the kernel
// aborts the program's section as natively; and sends a thread moved into the cache inside the
// program's own section to its abort handler, as the kernel would on its way back from the stop.
#pragma once

#include <cstdint>
#include <optional>

#include "arch/x86/raw_registers.hpp"
#include "base/result.hpp"
#include "tracer/inprocess/recorder/recorder_api.h"
#include "tracer/linux/kernel.hpp"
#include "tracer/linux/recorder_memory.hpp"
#include "tracer/types.hpp"

namespace tracer {

class RseqLink {
 public:
  // As stopped `caller` registered its rseq area (PTRACE_GET_RSEQ_CONFIGURATION): the distance of
  // its rseq_cs word from its %fs base and the signature, written where the recorder reads them
  // (info.rseq_config). Nothing when it has none.
  base::Result<void> describe(Kernel& kernel, Tid caller, const hs_recorder_process_info& info, RecorderMemory& memory);
  // A thread leaving the cache with `regs`: its rseq_cs word, pointing at a copy's descriptor,
  // gets the program's back (kept by the copy's entry at `kept_slot` in the thread's block).
  base::Result<void> give_back(RecorderMemory& memory, Addr kept_slot, const arch::x86::RawRegisters& regs);
  // A thread entering the cache with `regs`: when it stands inside the program's section, its
  // word is cleared and its rip set to the section's abort handler, which is returned (a gap to
  // record); nothing otherwise.
  base::Result<std::optional<Addr>> abort_section(RecorderMemory& memory, arch::x86::RawRegisters& regs);

 private:
  Addr cs_word(const arch::x86::RawRegisters& regs) const;

  std::int64_t cs_offset_ = 0;  // of each thread's rseq_cs word from its %fs base; 0: none
  Addr descriptors_ = 0;        // the recorder's descriptors
  std::uint64_t descriptor_bytes_ = 0;
};

}  // namespace tracer
