// Restartable sequences (rseq(2)) in the cache. The kernel aborts a thread's critical section when
// the thread is preempted, migrated or signalled while its pc lies in the range
// [start_ip, start_ip + post_commit_offset) of the descriptor its rseq_cs word names; in the cache
// the pc never does, so per-CPU code would commit after losing its CPU (lost updates).
//
// A section is learned from the `lea` of its descriptor (librseq's, tcmalloc's and hand-written
// sections load it so, just before the store to rseq_cs), checked as the kernel would check it:
// then the translator ends the block before the section and translates the section as a copy of
// its own, with a descriptor of the recorder's that names the copy:
//   - the copy's entry keeps the thread's rseq_cs word (the program's descriptor) in its block and
//     points it at the copy's descriptor with one store, the last instruction before the copy (as
//     the program's store is the last before its section): `mov qword fs:[offset], imm32`, so
//     descriptors lie under 2 GiB (MAP_32BIT);
//   - each way out of the copy (the commit's fall-through, a branch out) puts the program's word
//     back;
//   - the copy's abort handler, after the program's signature, records a gap (where the section
//     was cut is unknown) and goes on at the program's abort handler, with the word the kernel
//     cleared, as natively.
// The server moves a thread stopped inside a copy back to the program's section with the program's
// word, so that a signal delivered there aborts the program's section as natively.
//
// The server tells where each thread's rseq_cs word is (a %fs-relative offset: glibc keeps the
// area at a fixed distance from the thread pointer) and the signature the threads registered.
// Without them (no rseq registered when recording began) sections are not learned.
#pragma once

#include <cstddef>
#include <cstdint>

#include "tracer/inprocess/recorder/code_pages.hpp"
#include "tracer/inprocess/recorder/emitter.hpp"

namespace recorder {

struct RseqSection {
  std::uint64_t start = 0;  // 0: an empty slot
  std::uint64_t post_commit = 0;
  std::uint64_t abort = 0;
  std::uint64_t descriptor = 0;  // the program's, where it was learned
};

// The words the server writes (recorder_api.h, rseq_config).
struct RseqConfig {
  std::int64_t cs_offset = 0;    // the rseq_cs word's distance from the %fs base; 0: unknown
  std::uint64_t signature = 0;   // RSEQ_SIG as the threads registered it (the low 32 bits)
};

class RseqSections {
 public:
  // Maps the recorder's descriptors (under 2 GiB). False if that failed: no section is learned.
  bool init();
  void unmap();
  RseqConfig& config() { return config_; }
  // `descriptor`, the target of a rip-relative lea, is learned if it describes a critical section
  // of executable code (pages) whose abort handler carries the signature.
  void learn(std::uint64_t descriptor, CodePages& pages);
  // Whether a learned section starts at `pc` (a block ends before it).
  bool starts_at(std::uint64_t pc) const {
    const RseqSection* s = count_ != 0 ? find(pc) : nullptr;
    return s != nullptr && s->post_commit != s->start;
  }
  // The section starting at `pc`, its descriptor read again (code may have changed); nullptr if
  // none (then forgotten).
  const RseqSection* section_at(std::uint64_t pc, CodePages& pages);
  // A descriptor of the recorder's (under 2 GiB), filled in by describe() once the copy is
  // made; 0 when none is left (until forget_descriptors).
  std::uint64_t new_descriptor();
  static void describe(std::uint64_t descriptor, std::uint64_t start, std::uint64_t length, std::uint64_t abort);
  // The cache was flushed: its copies and their descriptors are gone (sections stay learned).
  void forget_descriptors() { used_ = 0; }
  // Where the server finds the recorder's descriptors (recorder_api.h).
  std::uint64_t descriptors() const { return reinterpret_cast<std::uint64_t>(descriptors_); }
  static constexpr std::size_t kDescriptorBytes = 1u << 20;

 private:
  static constexpr std::size_t kSlots = 1024;  // a power of two
  const RseqSection* find(std::uint64_t pc) const;
  RseqSection* slot_for(std::uint64_t pc);
  bool describes_section(std::uint64_t descriptor, CodePages& pages, RseqSection& out) const;
  RseqConfig config_;
  RseqSection slots_[kSlots]{};
  std::size_t count_ = 0;
  std::uint8_t* descriptors_ = nullptr;
  std::size_t used_ = 0;
};

// The copy's entry: the program's rseq_cs word kept in the thread's block, then the word pointed
// at `descriptor` (the last instruction: the copy follows).
void emit_rseq_enter(Emitter& e, std::int32_t cs_offset, std::uint64_t descriptor);
// A way out of the copy: the program's word put back. Registers and flags kept.
void emit_rseq_leave(Emitter& e, std::int32_t cs_offset);

}  // namespace recorder
