// For --btrace-scope tests: main calls into libc (puts, a direct call; qsort, which calls back
// into cmp here; strlen through a function pointer) between two functions of its own.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

volatile int sink;

__attribute__((noinline)) void begin(void) { sink += 1; }
__attribute__((noinline)) void done(void) { sink += 2; }

__attribute__((noinline)) static int cmp(const void* a, const void* b) {
  return *(const int*)a - *(const int*)b;
}

__attribute__((noinline)) static int tally(const int* v, int n) {
  int sum = 0;
  for (int i = 0; i < n; ++i) {
    sum += v[i] * (i + 1);
  }
  return sum;
}

int main(void) {
  int v[] = {5, 3, 9, 1, 7, 2, 8, 6, 4, 0};
  size_t (*len)(const char*) = strlen;
  begin();
  puts("scoped: sorting");
  qsort(v, 10, sizeof v[0], cmp);
  sink += (int)len("abc");
  int t = tally(v, 10);
  done();
  printf("scoped: %d %d %d\n", v[0], v[9], t);
  return 0;
}
