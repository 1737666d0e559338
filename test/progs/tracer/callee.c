/* Functions a tracer test calls inside the running program (tracer/linux/inferior_call.hpp),
 * and a main that sleeps in a syscall meanwhile: `callee N` sleeps N times 100 ms, then says
 * how many ticks it counted and how many sleeps were cut short (none, if a syscall the call
 * interrupted restarts). It prints "ready" first. */
#include <dlfcn.h>
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

int main(int argc, char** argv) {
  int rounds = argc > 1 ? atoi(argv[1]) : 50;
  printf("ready\n");
  fflush(stdout);
  long ticks = 0, cut = 0;
  for (int i = 0; i < rounds; ++i) {
    struct timespec ts = {0, 100 * 1000 * 1000};
    cut += nanosleep(&ts, 0) != 0; /* a stop of the tracer's must restart it, never cut it */
    ++ticks;
  }
  printf("ticks=%ld calls=%ld cut=%ld\n", ticks, calls, cut);
  return 0;
}
