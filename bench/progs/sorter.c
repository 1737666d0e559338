/* sorter.c - a running program for bench/attach_bench.sh: sorts arrays of 64 ints with qsort
   and a comparison function, forever, and prints how many sorts it has done every 100 ms
   ("t=SECONDS sorts=N"), so that its rate can be read before, while and after a debugger
   attaches and records. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static int compare(const void* a, const void* b) {
  const int x = *(const int*)a, y = *(const int*)b;
  return (x > y) - (x < y);
}

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(void) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  int v[64];
  unsigned seed = 1;
  unsigned long sorts = 0;
  double next = now() + 0.1;
  for (;;) {
    for (int i = 0; i < 64; ++i) {
      seed = seed * 1103515245u + 12345u;
      v[i] = (int)(seed >> 1);
    }
    qsort(v, 64, sizeof v[0], compare);
    ++sorts;
    if ((sorts & 255) == 0 && now() >= next) {
      printf("t=%.3f sorts=%lu\n", now(), sorts);
      next += 0.1;
    }
  }
}
