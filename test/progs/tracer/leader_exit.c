/* main calls pthread_exit while a worker keeps running; the worker calls tick() every
   10 ms and the process exits 5 after 30 ticks. */
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

volatile int ticks;

__attribute__((noinline)) void tick(void) { ++ticks; }

static void* worker(void* arg) {
  (void)arg;
  struct timespec ts = {0, 10 * 1000 * 1000};
  for (int i = 0; i < 30; ++i) {
    nanosleep(&ts, 0);
    tick();
  }
  exit(5);
}

int main(void) {
  pthread_t t;
  pthread_create(&t, 0, worker, 0);
  pthread_exit(0);
}
