/* resignal.c - two threads run the same loop, run(); the main thread signals itself (SIGUSR1,
   handled) after every 64 turns, so that while GDB `next`s the other thread through run(), the
   main thread's signals keep coming to GDB's attention: a range step of one thread begins while
   another's event waits to be reported, and the main thread runs the very lines the stepped
   thread ran to. Prints "resignal ok" and exits 0 when both sums are right. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

#define STEPPED_TURNS 200

static volatile long sums[2];
static volatile int done;
static volatile long handled;

static void on_usr1(int sig) {
  (void)sig;
  handled++;
}

__attribute__((noinline)) static void run(int who, long n) {
  for (long i = 0; i < n; i++) { /* run: loop */
    long s = sums[who]; s += i; s ^= 1; s -= 1; s ^= 1; s += 1; sums[who] = s; /* run: body */
  }
}

static void *stepped(void *arg) {
  (void)arg;
  run(1, STEPPED_TURNS);
  done = 1;
  return NULL;
}

int main(void) {
  signal(SIGUSR1, on_usr1);
  pthread_t other;
  pthread_create(&other, NULL, stepped, NULL);
  long calls = 0;
  while (!done) {
    run(0, 64);
    calls += 64;
    syscall(SYS_tgkill, getpid(), syscall(SYS_gettid), SIGUSR1);
  }
  pthread_join(other, NULL);
  const int ok = sums[0] == calls / 64 * (64 * 63 / 2) && sums[1] == (long)STEPPED_TURNS * (STEPPED_TURNS - 1) / 2;
  printf("resignal %s calls=%ld handled=%ld\n", ok ? "ok" : "wrong", calls, handled);
  return ok ? 0 : 1;
}
