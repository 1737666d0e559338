// Which of the program's code the translator may copy, and which system calls make copies
// stale. Code is translated only from a mapping that is executable and not writable (read from
// /proc/self/maps): code on a writable page (a JIT's, self-modifying code) can change under its
// translation, so it runs natively, a gap in the history. Code in a shared mapping is translated
// with a check of its bytes (code_check.hpp): another view of the same memory may write it. The mappings that hold translated code
// are remembered: a system call that unmaps, remaps or reprotects one of them makes the cache
// stale (dlclose then another library at the same address, a JIT's W^X rewrite).
#pragma once

#include <cstddef>
#include <cstdint>

namespace recorder {

class CodePages {
 public:
  // The end of the executable, non-writable mapping that holds `pc`; 0 if none does. shared:
  // whether that mapping is shared (MAP_SHARED: another view may write its bytes, code_check.hpp).
  std::uint64_t readonly_end(std::uint64_t pc, bool* shared = nullptr);
  // Whether [at, at + bytes) lies in one readable, private mapping that is none of the kernel's
  // special ones ([vvar], [vdso], [vsyscall]), read again once if not: the recorder may read it
  // with no fault (and no system call of a kind the program never makes).
  bool readable(std::uint64_t at, std::size_t bytes);
  // A block starting at pc (in a mapping readonly_end() found) was translated.
  void note_translated(std::uint64_t pc);
  // Whether [lo, hi) overlaps a mapping that holds translated code.
  bool touches_translated(std::uint64_t lo, std::uint64_t hi) const;
  // The program's mappings may have changed: read them again when next asked.
  void forget_mappings() {
    count_ = 0;
    readable_count_ = 0;
  }
  // The cache was flushed: nothing is translated.
  void clear() {
    count_ = 0;
    readable_count_ = 0;
    translated_count_ = 0;
  }

 private:
  struct Range {
    std::uint64_t lo, hi;
    bool shared;
  };
  static constexpr std::size_t kMaxRanges = 1024;
  const Range* find(std::uint64_t pc) const;
  void read_mappings();
  Range ranges_[kMaxRanges]{};  // executable and not writable, as last read
  std::size_t count_ = 0;
  Range readable_[kMaxRanges]{};  // readable, as last read
  std::size_t readable_count_ = 0;
  Range translated_[kMaxRanges]{};
  std::size_t translated_count_ = 0;
};

// The page ranges a system call can unmap, replace or reprotect, from its number and arguments
// (rdi, rsi, rdx, r10, r8, r9): mmap with MAP_FIXED, mprotect, munmap, pkey_mprotect, and
// mremap's old range (with MREMAP_FIXED its new one too). None for any other call.
struct ChangedRanges {
  std::size_t count = 0;
  std::uint64_t lo[2]{}, hi[2]{};
};
ChangedRanges changed_ranges(std::uint64_t number, const std::uint64_t args[6]);

}  // namespace recorder
