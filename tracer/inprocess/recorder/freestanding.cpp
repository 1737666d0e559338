// The few C library functions the recorder image and its private copy of Zydis need, defined
// here: the image links no libc (nor libstdc++), so that nothing of the program's (its loader,
// allocator, locks, TLS) is ever used by the guest. Only the image links this file; the recorder
// linked into a program for tests uses the program's libc.
#include <cstddef>
#include <cstdint>

extern "C" {

__attribute__((visibility("default"))) void* memcpy(void* to, const void* from, std::size_t n) {
  void* out = to;
  asm volatile("rep movsb" : "+D"(to), "+S"(from), "+c"(n) : : "memory");
  return out;
}

__attribute__((visibility("default"))) void* memmove(void* to, const void* from, std::size_t n) {
  auto* d = static_cast<unsigned char*>(to);
  const auto* s = static_cast<const unsigned char*>(from);
  if (d <= s || d >= s + n) {
    return memcpy(to, from, n);
  }
  void* end_to = d + n - 1;
  const void* end_from = s + n - 1;
  asm volatile("std\n\trep movsb\n\tcld" : "+D"(end_to), "+S"(end_from), "+c"(n) : : "memory");
  return to;
}

__attribute__((visibility("default"))) void* memset(void* to, int byte, std::size_t n) {
  void* out = to;
  asm volatile("rep stosb" : "+D"(to), "+c"(n) : "a"(byte) : "memory");
  return out;
}

__attribute__((visibility("default"))) int memcmp(const void* a, const void* b, std::size_t n) {
  const auto* x = static_cast<const unsigned char*>(a);
  const auto* y = static_cast<const unsigned char*>(b);
  for (std::size_t i = 0; i < n; ++i) {
    if (x[i] != y[i]) {
      return x[i] < y[i] ? -1 : 1;
    }
  }
  return 0;
}

__attribute__((visibility("default"))) std::size_t strlen(const char* s) {
  std::size_t n = 0;
  while (s[n] != 0) {
    ++n;
  }
  return n;
}

// A failed assertion or a smashed stack in the guest: it stops where it is (ud2, SIGILL, which
// the server sees), never calling into the program.
__attribute__((visibility("default"), noreturn)) void __assert_fail(const char*, const char*, unsigned, const char*) {
  __builtin_trap();
}
__attribute__((visibility("default"), noreturn)) void __stack_chk_fail() { __builtin_trap(); }

}
