// One AVX-512 instruction, which Valgrind 3.19 cannot translate: on a CPU with AVX-512 the
// program runs natively, and under the dbt recorder it gets SIGILL there.
#include <stdio.h>

int main(void) {
  puts("before");
  __asm__ volatile("vpxord %%zmm1, %%zmm1, %%zmm1" ::: "xmm1");
  puts("after");
  return 0;
}
