#include "tracer/inprocess/recorder/rseq_sections.hpp"

#include <linux/rseq.h>
#include <sys/mman.h>

#include <cstring>

#include "tracer/inprocess/recorder/address_map.hpp"
#include "tracer/inprocess/recorder/sys.hpp"

namespace recorder {
namespace {

using Descriptor = rseq_cs;
constexpr std::size_t kDescriptorAlign = alignof(rseq_cs);
// A section longer than this is not one the translator could copy in one block anyway.
constexpr std::uint64_t kMostSectionBytes = 4096;

// mov rax, fs:[disp32] (0x8b) or mov fs:[disp32], rax (0x89)
void fs_move(Emitter& e, std::uint8_t opcode, std::int32_t disp) {
  e.bytes({0x64, 0x48, opcode, 0x04, 0x25});
  e.u32(static_cast<std::uint32_t>(disp));
}

}  // namespace

bool RseqSections::init() {
  descriptors_ = static_cast<std::uint8_t*>(
      sys::map(nullptr, kDescriptorBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT));
  used_ = 0;
  return descriptors_ != nullptr && reinterpret_cast<std::uint64_t>(descriptors_) + kDescriptorBytes <= INT32_MAX;
}

void RseqSections::unmap() {
  if (descriptors_ != nullptr) {
    sys::unmap(descriptors_, kDescriptorBytes);
    descriptors_ = nullptr;
  }
}

const RseqSection* RseqSections::find(std::uint64_t pc) const {
  for (std::uint64_t i = address_slot(pc, kSlots), n = 0; n < kSlots; i = (i + 1) & (kSlots - 1), ++n) {
    if (slots_[i].start == pc) {
      return &slots_[i];
    }
    if (slots_[i].start == 0) {
      return nullptr;
    }
  }
  return nullptr;
}

RseqSection* RseqSections::slot_for(std::uint64_t pc) {
  for (std::uint64_t i = address_slot(pc, kSlots), n = 0; n < kSlots; i = (i + 1) & (kSlots - 1), ++n) {
    if (slots_[i].start == pc || slots_[i].start == 0) {
      return &slots_[i];
    }
  }
  return nullptr;
}

bool RseqSections::describes_section(std::uint64_t descriptor, CodePages& pages, RseqSection& out) const {
  Descriptor d{};
  if (config_.cs_offset == 0 || descriptors_ == nullptr || descriptor % kDescriptorAlign != 0 ||
      !pages.readable(descriptor, sizeof d)) {
    return false;
  }
  __builtin_memcpy(&d, reinterpret_cast<const void*>(descriptor), sizeof d);
  // What the kernel checks (kernel/rseq.c), and code the translator may copy.
  if (d.version != 0 || d.flags != 0 || d.post_commit_offset == 0 || d.post_commit_offset > kMostSectionBytes ||
      d.abort_ip - d.start_ip < d.post_commit_offset || d.abort_ip < 4) {
    return false;
  }
  const std::uint64_t end = d.start_ip + d.post_commit_offset;
  const std::uint64_t code_end = pages.readonly_end(d.start_ip);
  if (code_end == 0 || code_end < end || pages.readonly_end(d.abort_ip - 4) < d.abort_ip) {
    return false;
  }
  std::uint32_t signature = 0;
  __builtin_memcpy(&signature, reinterpret_cast<const void*>(d.abort_ip - 4), sizeof signature);
  if (signature != static_cast<std::uint32_t>(config_.signature)) {
    return false;
  }
  out = {d.start_ip, end, d.abort_ip, descriptor};
  return true;
}

void RseqSections::learn(std::uint64_t descriptor, CodePages& pages) {
  RseqSection section;
  if (!describes_section(descriptor, pages, section)) {
    return;
  }
  RseqSection* slot = slot_for(section.start);
  if (slot == nullptr || (slot->start == 0 && count_ + 1 > kSlots / 2)) {
    return;  // (full: the section runs as plain code)
  }
  count_ += slot->start == 0 ? 1 : 0;
  *slot = section;
}

const RseqSection* RseqSections::section_at(std::uint64_t pc, CodePages& pages) {
  if (count_ == 0) {
    return nullptr;
  }
  auto* slot = const_cast<RseqSection*>(find(pc));
  if (slot == nullptr) {
    return nullptr;
  }
  RseqSection now;
  if (describes_section(slot->descriptor, pages, now) && now.start == slot->start) {
    *slot = now;
    return slot;
  }
  // Changed: the slot keeps its key (probes go on past it) but names no section any more.
  slot->post_commit = slot->start;
  return nullptr;
}

std::uint64_t RseqSections::new_descriptor() {
  if (descriptors_ == nullptr || used_ + sizeof(Descriptor) > kDescriptorBytes) {
    return 0;
  }
  const auto at = reinterpret_cast<std::uint64_t>(descriptors_ + used_);
  used_ += sizeof(Descriptor);
  return at;
}

void RseqSections::describe(std::uint64_t descriptor, std::uint64_t start, std::uint64_t length, std::uint64_t abort) {
  const Descriptor d{0, 0, start, length, abort};
  __builtin_memcpy(reinterpret_cast<void*>(descriptor), &d, sizeof d);
}

void emit_rseq_enter(Emitter& e, std::int32_t cs_offset, std::uint64_t descriptor) {
  e.store_gs(&slots().save_rax, kRax);
  fs_move(e, 0x8b, cs_offset);
  e.store_gs(&slots().rseq_cs_kept, kRax);
  e.load_gs(kRax, &slots().save_rax);
  e.bytes({0x64, 0x48, 0xc7, 0x04, 0x25});  // mov qword fs:[cs_offset], imm32 (the descriptor, under 2 GiB)
  e.u32(static_cast<std::uint32_t>(cs_offset));
  e.u32(static_cast<std::uint32_t>(descriptor));
}

void emit_rseq_leave(Emitter& e, std::int32_t cs_offset) {
  e.store_gs(&slots().save_rax, kRax);
  e.load_gs(kRax, &slots().rseq_cs_kept);
  fs_move(e, 0x89, cs_offset);
  e.load_gs(kRax, &slots().save_rax);
}

}  // namespace recorder
