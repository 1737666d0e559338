/* Two worker threads and main meet at a barrier (main calls ready() just before it), then
   both workers call hit() at the same moment; the process exits 0. */
#include <pthread.h>

static pthread_barrier_t barrier;
volatile int hits;

__attribute__((noinline)) void hit(void) { __atomic_add_fetch(&hits, 1, __ATOMIC_SEQ_CST); }
__attribute__((noinline)) void ready(void) { __asm__ volatile("" ::: "memory"); }

static void* worker(void* arg) {
  (void)arg;
  pthread_barrier_wait(&barrier);
  hit();
  return 0;
}

int main(void) {
  pthread_t a, b;
  pthread_barrier_init(&barrier, 0, 3);
  pthread_create(&a, 0, worker, 0);
  pthread_create(&b, 0, worker, 0);
  ready();
  pthread_barrier_wait(&barrier);
  pthread_join(a, 0);
  pthread_join(b, 0);
  return hits == 2 ? 0 : 1;
}
