/* clones.c - N threads made with glibc's clone() (the raw kind, as GDB's step-over-clone test
   makes them: CLONE_VM | CLONE_FILES, a stack of their own), each counting itself in; main waits
   for all (alarm: 30 s), prints "clones ok" and exits 0. Usage: clones [N] (default 3, up to 16) */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define STACK_SIZE 0x4000
#define MAX_CLONES 16

static int started;

static int clone_fn(void* arg) {
  (void)arg;
  __atomic_add_fetch(&started, 1, __ATOMIC_SEQ_CST);
  return 0;
}

__attribute__((noinline)) void all_started(int n) { printf("clones ok: %d\n", n); }

int main(int argc, char** argv) {
  int n = argc > 1 ? atoi(argv[1]) : 3;
  if (n < 1 || n > MAX_CLONES) {
    n = 3;
  }
  static unsigned char* stacks[MAX_CLONES];
  for (int i = 0; i < n; i++) {
    stacks[i] = malloc(STACK_SIZE);
    if (clone(clone_fn, stacks[i] + STACK_SIZE, CLONE_VM | CLONE_FILES, NULL) < 0) {
      perror("clone");
      return 1;
    }
  }
  alarm(30);
  while (__atomic_load_n(&started, __ATOMIC_SEQ_CST) != n) {
    usleep(1000);
  }
  all_started(n);
  return 0;
}
