/* Creates and joins N threads one after the other (argv[1], default 2000), each summing a little;
 * the last one calls last_thread() before it ends. Prints the total. A recorder that keeps a
 * block per thread it ever saw runs out; one that reuses the blocks of threads gone does not. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static unsigned long totals[4];

void last_thread(void) { __asm__ volatile("" ::: "memory"); }

static void* work(void* arg) {
  const long n = (long)arg;
  unsigned long sum = 0;
  for (long i = 0; i < 200; ++i) {
    sum += (unsigned long)(i * n) % 7;
  }
  totals[n % 4] += sum;
  return NULL;
}

static void* last(void* arg) {
  work(arg);
  last_thread();
  return NULL;
}

int main(int argc, char** argv) {
  const long n = argc > 1 ? atol(argv[1]) : 2000;
  for (long i = 0; i < n; ++i) {
    pthread_t t;
    if (pthread_create(&t, NULL, i == n - 1 ? last : work, (void*)i) != 0) {
      perror("pthread_create");
      return 1;
    }
    pthread_join(t, NULL);
  }
  printf("threads %ld, total %lu\n", n, totals[0] + totals[1] + totals[2] + totals[3]);
  return 0;
}
