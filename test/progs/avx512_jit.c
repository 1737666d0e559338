// An AVX-512 instruction written at run time (no scan of the executable finds it): on a CPU
// with AVX-512 the program runs natively; under the dbt recorder it gets SIGILL there.
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

int main(void) {
  static const unsigned char code[] = {0x62, 0xf1, 0x75, 0x48, 0xef, 0xc9,  // vpxord %zmm1,%zmm1,%zmm1
                                       0xc3};                               // ret
  void* page = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (page == MAP_FAILED) {
    return 2;
  }
  memcpy(page, code, sizeof code);
  puts("before");
  ((void (*)(void))page)();
  puts("after");
  return 0;
}
