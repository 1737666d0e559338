#include "tracer/linux/recorder_rseq.hpp"

#include <linux/rseq.h>

#include <cstddef>

#include "arch/x86/register_layout.hpp"

namespace tracer {

namespace gpr = arch::x86;

base::Result<void> RseqLink::describe(Kernel& kernel, Tid caller, const hs_recorder_process_info& info,
                                      RecorderMemory& memory) {
  auto area = kernel.rseq_area(caller);
  if (!area) {
    return area.error();
  }
  arch::x86::RawRegisters regs;
  if (auto r = kernel.read_gprs(caller, regs); !r) {
    return r;
  }
  if (area->area == 0 || info.rseq_config == 0 || info.rseq_descriptors == 0) {
    return base::success();  // (no rseq registered: no section to protect)
  }
  const auto offset = static_cast<std::int64_t>(area->area + offsetof(rseq, rseq_cs) - regs.gpr[gpr::kFsBase]);
  if (offset == 0 || offset < INT32_MIN || offset > INT32_MAX) {
    return base::make_error(base::Errc::unsupported, "the rseq area is not at a fixed distance from the thread pointer");
  }
  if (auto w = memory.write_word(info.rseq_config, static_cast<std::uint64_t>(offset)); !w) {
    return w;
  }
  if (auto w = memory.write_word(info.rseq_config + 8, area->signature); !w) {
    return w;
  }
  cs_offset_ = offset;
  descriptors_ = info.rseq_descriptors;
  descriptor_bytes_ = info.rseq_descriptor_bytes;
  return base::success();
}

Addr RseqLink::cs_word(const arch::x86::RawRegisters& regs) const {
  return regs.gpr[gpr::kFsBase] + static_cast<std::uint64_t>(cs_offset_);
}

base::Result<void> RseqLink::give_back(RecorderMemory& memory, Addr kept_slot, const arch::x86::RawRegisters& regs) {
  if (cs_offset_ == 0 || kept_slot == 0) {
    return base::success();
  }
  const Addr word = cs_word(regs);
  auto cs = memory.read_word(word);
  if (!cs || *cs < descriptors_ || *cs >= descriptors_ + descriptor_bytes_) {
    return base::success();  // (not in a copy, or no rseq area there)
  }
  auto kept = memory.read_word(kept_slot);
  if (!kept) {
    return kept.error();
  }
  return memory.write_word(word, *kept);
}

base::Result<std::optional<Addr>> RseqLink::abort_section(RecorderMemory& memory, arch::x86::RawRegisters& regs) {
  if (cs_offset_ == 0) {
    return std::optional<Addr>{};
  }
  const Addr word = cs_word(regs);
  auto cs = memory.read_word(word);
  if (!cs || *cs == 0) {
    return std::optional<Addr>{};  // (no section on, or no rseq area there)
  }
  rseq_cs descriptor{};
  const Addr pc = regs.gpr[gpr::kRip];
  if (!memory.read_struct(*cs, descriptor) || descriptor.version != 0 ||
      pc - descriptor.start_ip >= descriptor.post_commit_offset) {
    return std::optional<Addr>{};  // (the kernel clears the word of a thread outside its section)
  }
  if (auto w = memory.write_word(word, 0); !w) {
    return w.error();
  }
  regs.gpr[gpr::kRip] = descriptor.abort_ip;
  return std::optional<Addr>{descriptor.abort_ip};
}

}  // namespace tracer
