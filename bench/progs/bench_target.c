/* bench_target.c - the inferior for bench/bench.sh.
   main -> fill a 64 MiB heap buffer (every page touched) -> ready() -> bump() x 100000
   -> spin(). The memory benchmark stops at ready() and dumps `buffer`; the breakpoint
   benchmark continues from hit to hit of bump(); the stepi benchmark stops at spin(), a
   call-free loop, and single-steps it. */
#include <stdlib.h>
#include <string.h>

#define BENCH_SIZE (64UL << 20)

const unsigned long bench_size = BENCH_SIZE;
unsigned char *buffer;
volatile unsigned long sink;

void ready(void)
{
  sink++;
}

void bump(void)
{
  sink++;
}

void spin(void)
{
  for (unsigned long i = 0; i < 1000000000UL; i++) {
    sink += i;
  }
}

int main(void)
{
  buffer = malloc(BENCH_SIZE);
  if (buffer == NULL) {
    return 1;
  }
  memset(buffer, 0x5a, BENCH_SIZE);
  ready();
  for (int i = 0; i < 100000; i++) {
    bump();
  }
  spin();
  return 0;
}
