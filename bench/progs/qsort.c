// qsort of N ints (default 1,000,000) with a comparison function: the dbt recorder's figure.
// bench_start/bench_end bracket the sort for the ptrace collectors' GDB sessions.
#include <stdio.h>
#include <stdlib.h>

volatile unsigned sink;

__attribute__((noinline)) void bench_start(void) { sink++; }
__attribute__((noinline)) void bench_end(void) { sink++; }

static int compare(const void* a, const void* b) {
  const int x = *(const int*)a, y = *(const int*)b;
  return (x > y) - (x < y);
}

int main(int argc, char** argv) {
  const size_t n = argc > 1 ? (size_t)atol(argv[1]) : 1000000;
  int* v = malloc(n * sizeof *v);
  if (v == NULL) {
    return 1;
  }
  unsigned seed = 1;
  for (size_t i = 0; i < n; ++i) {
    seed = seed * 1103515245u + 12345u;
    v[i] = (int)(seed >> 1);
  }
  bench_start();
  qsort(v, n, sizeof *v, compare);
  bench_end();
  for (size_t i = 1; i < n; ++i) {
    if (v[i - 1] > v[i]) {
      return 2;
    }
  }
  free(v);
  return 0;
}
