// The recorder's system calls, made with the `syscall` instruction itself: the recorder is a
// guest with no libc of its own and calls none of the program's (no errno, no cancellation
// point, no lock of libc's). Each returns the kernel's value: -errno on failure.
#pragma once

#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include <cstddef>
#include <cstdint>

namespace recorder::sys {

inline long call6(long number, std::uint64_t a0 = 0, std::uint64_t a1 = 0, std::uint64_t a2 = 0,
                  std::uint64_t a3 = 0, std::uint64_t a4 = 0, std::uint64_t a5 = 0) {
  register std::uint64_t r10 asm("r10") = a3;
  register std::uint64_t r8 asm("r8") = a4;
  register std::uint64_t r9 asm("r9") = a5;
  asm volatile("syscall"
               : "+a"(number)
               : "D"(a0), "S"(a1), "d"(a2), "r"(r10), "r"(r8), "r"(r9)
               : "rcx", "r11", "memory");
  return number;
}

inline bool failed(long result) { return result < 0 && result > -4096; }

// mmap: the mapping, or nullptr (never MAP_FAILED).
inline void* map(void* want, std::size_t bytes, int prot, int flags, int fd = -1, std::uint64_t offset = 0) {
  const long r = call6(SYS_mmap, reinterpret_cast<std::uint64_t>(want), bytes, static_cast<std::uint64_t>(prot),
                       static_cast<std::uint64_t>(flags), static_cast<std::uint64_t>(fd), offset);
  return failed(r) ? nullptr : reinterpret_cast<void*>(r);
}
inline long unmap(const void* at, std::size_t bytes) {
  return call6(SYS_munmap, reinterpret_cast<std::uint64_t>(at), bytes);
}
inline long advise(const void* at, std::size_t bytes, int advice) {
  return call6(SYS_madvise, reinterpret_cast<std::uint64_t>(at), bytes, static_cast<std::uint64_t>(advice));
}
// Private read-write memory of `bytes` (a multiple of 2 MiB) on 2 MiB boundaries, asked to be
// backed by huge pages: a table touched at random costs a fault and a TLB entry per 2 MiB, not
// per 4 KiB page (nullptr if mmap failed).
inline void* map_huge_table(std::size_t bytes) {
  constexpr std::uint64_t kHuge = 2u << 20;
  auto* got = static_cast<std::uint8_t*>(map(nullptr, bytes + kHuge, PROT_READ | PROT_WRITE,
                                             MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE));
  if (got == nullptr) {
    return nullptr;
  }
  const std::uint64_t start = (reinterpret_cast<std::uint64_t>(got) + kHuge - 1) & ~(kHuge - 1);
  auto* table = reinterpret_cast<std::uint8_t*>(start);
  if (table != got) {
    unmap(got, static_cast<std::size_t>(table - got));
  }
  unmap(table + bytes, static_cast<std::size_t>(got + kHuge - table));
  advise(table, bytes, MADV_HUGEPAGE);  // (refused where the kernel has none: small pages)
  return table;
}
inline long open(const char* path, int flags) {
  return call6(SYS_openat, static_cast<std::uint64_t>(-100 /* AT_FDCWD */), reinterpret_cast<std::uint64_t>(path),
               static_cast<std::uint64_t>(flags));
}
inline long read(int fd, void* out, std::size_t bytes) {
  return call6(SYS_read, static_cast<std::uint64_t>(fd), reinterpret_cast<std::uint64_t>(out), bytes);
}
inline long close(int fd) { return call6(SYS_close, static_cast<std::uint64_t>(fd)); }
inline long fstat(int fd, struct stat* st) {
  return call6(SYS_fstat, static_cast<std::uint64_t>(fd), reinterpret_cast<std::uint64_t>(st));
}
inline long ftruncate(int fd, std::uint64_t bytes) { return call6(SYS_ftruncate, static_cast<std::uint64_t>(fd), bytes); }
inline long memfd_create(const char* name, unsigned flags) {
  return call6(SYS_memfd_create, reinterpret_cast<std::uint64_t>(name), flags);
}
inline long arch_prctl(int code, std::uint64_t arg) {
  return call6(SYS_arch_prctl, static_cast<std::uint64_t>(code), arg);
}

}  // namespace recorder::sys
