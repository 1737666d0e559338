/* threads_target.c - 1000 threads (argv[1] overrides) blocked on a condition variable, for the
   many-thread bench: main calls ready() once all exist, then tick() every millisecond. */
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t never = PTHREAD_COND_INITIALIZER;
static pthread_barrier_t started;
volatile long ticks;

__attribute__((noinline)) void ready(void) { __asm__ volatile("" ::: "memory"); }
__attribute__((noinline)) void tick(void) { ticks++; }

static void* blocked(void* arg) {
  (void)arg;
  pthread_barrier_wait(&started);
  pthread_mutex_lock(&lock);
  for (;;) {
    pthread_cond_wait(&never, &lock);
  }
  return 0;
}

int main(int argc, char** argv) {
  int n = argc > 1 ? atoi(argv[1]) : 1000;
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, 64 * 1024);
  pthread_barrier_init(&started, 0, (unsigned)n + 1);
  for (int i = 0; i < n; i++) {
    pthread_t t;
    pthread_create(&t, &attr, blocked, 0);
  }
  pthread_barrier_wait(&started);
  ready();
  struct timespec ms = {0, 1000000};
  for (;;) {
    tick();
    nanosleep(&ms, 0);
  }
}
