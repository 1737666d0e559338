/* Fast tracepoints under contention: four threads call hit() 100000 times each at the same
   time, then main calls done(); exit code 0 when sink is the sum every thread added. Linked
   with the in-process agent. hit_site, a 5-byte nop in hit, is where a jump can stand (as
   GDB's own tests mark theirs). */
#include <pthread.h>

#define THREADS 4
#define CALLS 100000L

volatile long sink;
static pthread_barrier_t barrier;

__attribute__((noinline)) void hit(long x) {
  __asm__ volatile(".globl hit_site\nhit_site: .byte 0x0f, 0x1f, 0x44, 0x00, 0x00");  // nopl 0(%rax,%rax)
  __atomic_add_fetch(&sink, x, __ATOMIC_RELAXED);
}
__attribute__((noinline)) void done(void) { __asm__ volatile("" ::: "memory"); }

static void* worker(void* arg) {
  (void)arg;
  pthread_barrier_wait(&barrier);
  for (long i = 0; i < CALLS; ++i) {
    hit(i);
  }
  return 0;
}

int main(void) {
  pthread_t t[THREADS];
  pthread_barrier_init(&barrier, 0, THREADS);
  for (int i = 0; i < THREADS; ++i) {
    pthread_create(&t[i], 0, worker, 0);
  }
  for (int i = 0; i < THREADS; ++i) {
    pthread_join(t[i], 0);
  }
  done();
  return sink == THREADS * (CALLS * (CALLS - 1) / 2) ? 0 : 1;
}
