/* Thread-local variables for qGetTLSAddr: one in the program, one in a shared library (not in
   the static build), and errno, each set to a different value in every thread; all threads
   then meet in all_set(). */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>

__thread int tls_main = 1;
#ifndef TLS_STATIC
extern __thread int tls_lib;
void set_tls_lib(int value);
#endif

static pthread_barrier_t ready;
static pthread_barrier_t done;

static void set_all(int base) {
  tls_main = base + 1;
#ifndef TLS_STATIC
  set_tls_lib(base + 2);
#endif
  errno = base + 3;
}

void all_set(void) {}

static void* worker(void* arg) {
  set_all((int)(long)arg);
  pthread_barrier_wait(&ready);
  pthread_barrier_wait(&done);
  return NULL;
}

int main(void) {
  pthread_t threads[2];
  pthread_barrier_init(&ready, NULL, 3);
  pthread_barrier_init(&done, NULL, 3);
  for (long i = 0; i < 2; i++) {
    pthread_create(&threads[i], NULL, worker, (void*)(100 * (i + 1)));
  }
  set_all(0);
  pthread_barrier_wait(&ready);
  all_set();
  pthread_barrier_wait(&done);
  for (int i = 0; i < 2; i++) {
    pthread_join(threads[i], NULL);
  }
  printf("tls_main=%d\n", tls_main);
  return 0;
}
