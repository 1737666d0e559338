// Many threads for the branch-trace memory figure: main creates N threads that wait at a
// barrier (bench_start: where recording begins), each takes BRANCHES branches or so, then
// they wait at a second barrier while main stops at bench_end, every thread and every ring
// still alive; then all exit.
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

volatile unsigned sink;
static pthread_barrier_t go, done;
static unsigned branches;

__attribute__((noinline)) void bench_start(void) { sink++; }
__attribute__((noinline)) void bench_end(void) { sink++; }

__attribute__((noinline)) static void step(unsigned i) {
  if (i & 1) {
    sink += i;
  }
}

static void* worker(void* arg) {
  (void)arg;
  pthread_barrier_wait(&go);
  for (unsigned i = 0; i < branches / 3; ++i) {  // call, return, loop: three taken branches
    step(i);
  }
  pthread_barrier_wait(&done);
  pthread_barrier_wait(&go);
  return NULL;
}

int main(int argc, char** argv) {
  const unsigned n = argc > 1 ? (unsigned)atoi(argv[1]) : 1000;
  branches = argc > 2 ? (unsigned)atoi(argv[2]) : 3000;
  pthread_t* th = calloc(n, sizeof *th);
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, 64 * 1024);
  pthread_barrier_init(&go, NULL, n + 1);
  pthread_barrier_init(&done, NULL, n + 1);
  for (unsigned i = 0; i < n; ++i) {
    if (pthread_create(&th[i], &attr, worker, NULL) != 0) {
      perror("pthread_create");
      return 1;
    }
  }
  bench_start();
  pthread_barrier_wait(&go);
  pthread_barrier_wait(&done);
  bench_end();
  pthread_barrier_wait(&go);
  for (unsigned i = 0; i < n; ++i) {
    pthread_join(th[i], NULL);
  }
  return 0;
}
