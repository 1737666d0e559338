// Branchy code for the branch-trace benchmark: a Collatz walk per number, a call and a few
// conditional branches every handful of instructions. bench_start/bench_end bracket it.
#include <stdlib.h>

volatile unsigned sink;

__attribute__((noinline)) void bench_start(void) { sink++; }
__attribute__((noinline)) void bench_end(void) { sink++; }

__attribute__((noinline)) static unsigned collatz(unsigned x) {
  return (x & 1) ? 3 * x + 1 : x / 2;
}

int main(int argc, char** argv) {
  const unsigned n = argc > 1 ? (unsigned)atoi(argv[1]) : 2000;
  bench_start();
  unsigned acc = 0;
  for (unsigned i = 1; i <= n; ++i) {
    unsigned x = i;
    for (int k = 0; k < 8 && x != 1; ++k) {
      x = collatz(x);
    }
    acc += x;
  }
  sink = acc;
  bench_end();
  return 0;
}
