/* Functions a tracer test calls inside the running program (tracer/linux/inferior_call.hpp),
 * and a main that sleeps in a syscall meanwhile: `callee N [W]` sleeps N times 100 ms (and so
 * do W worker threads of its own), then says how many ticks it counted and how many sleeps
 * were cut short (none, if a syscall the call interrupted restarts). It prints "ready" first,
 * once its workers run. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <time.h>

volatile long calls;

__attribute__((noinline)) long callee_add(long a, long b, const char* text) {
  ++calls;
  return a + b + (long)strlen(text);
}

/* Clobbers the vector registers and the flags, as any libc function may. */
__attribute__((noinline)) double callee_float(double x) {
  volatile double y = x;
  for (int i = 0; i < 10; ++i) {
    y = y * 1.5 + 0.25;
  }
  return y;
}

__attribute__((noinline)) void callee_crash(void) { *(volatile int*)16 = 1; }

__attribute__((noinline)) void callee_spin(void) {
  for (;;) {
    ++calls;
  }
}

/* The loader's entry points, resolved by the dynamic linker, for the tests to call. */
void* (*volatile keep_dlopen)(const char*, int) = dlopen;
void* (*volatile keep_dlsym)(void*, const char*) = dlsym;
int (*volatile keep_dlclose)(void*) = dlclose;

static int rounds = 50;
static long worker_ticks, worker_cut;

/* One round of sleep: 1 if the sleep was cut short (a stop of the tracer's must restart it). */
__attribute__((noinline)) static int sleep_round(void) {
  struct timespec ts = {0, 100 * 1000 * 1000};
  return nanosleep(&ts, 0) != 0;
}

static void* worker(void* arg) {
  (void)arg;
  for (int i = 0; i < rounds; ++i) {
    __atomic_add_fetch(&worker_cut, sleep_round(), __ATOMIC_SEQ_CST);
    __atomic_add_fetch(&worker_ticks, 1, __ATOMIC_SEQ_CST);
  }
  return 0;
}

int main(int argc, char** argv) {
  rounds = argc > 1 ? atoi(argv[1]) : 50;
  const int workers = argc > 2 ? atoi(argv[2]) : 0;
  pthread_t threads[8];
  for (int i = 0; i < workers && i < 8; ++i) {
    pthread_create(&threads[i], 0, worker, 0);
  }
  printf("ready\n");
  fflush(stdout);
  long ticks = 0, cut = 0;
  for (int i = 0; i < rounds; ++i) {
    cut += sleep_round();
    ++ticks;
  }
  for (int i = 0; i < workers && i < 8; ++i) {
    pthread_join(threads[i], 0);
  }
  printf("ticks=%ld calls=%ld cut=%ld", ticks, calls, cut);
  if (workers > 0) {
    printf(" worker_ticks=%ld worker_cut=%ld", worker_ticks, worker_cut);
  }
  printf("\n");
  return 0;
}
