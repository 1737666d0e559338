// Driver of btrace_code.S for the branch-trace tests: no argument runs bt_run and bt_raise in
// the main thread; "threads" runs bt_work in two threads at once.
#include <pthread.h>
#include <signal.h>
#include <string.h>

void bt_run(void);
void bt_raise(void);
void bt_handler(int);
void bt_work(int n);

static pthread_barrier_t barrier;
static pthread_barrier_t go;  // workers wait here while the test enables tracing
static int running;           // workers past `go`: neither starts its work before both run

// Where the test stops the main thread once both workers are past the barrier.
__attribute__((noinline)) void bt_ready(void) {
  __asm__ volatile("" ::: "memory");
}

static void* worker(void* arg) {
  (void)arg;
  pthread_barrier_wait(&barrier);
  pthread_barrier_wait(&go);
  // The barrier wakes both, but the kernel may run one long before the other: the fairness
  // the test checks is the collector's, so both are running before the work begins.
  __atomic_add_fetch(&running, 1, __ATOMIC_SEQ_CST);
  while (__atomic_load_n(&running, __ATOMIC_SEQ_CST) < 2) {
  }
  bt_work(300);
  return NULL;
}

int main(int argc, char** argv) {
  (void)argv;
  if (argc > 1) {
    pthread_t t[2];
    pthread_barrier_init(&barrier, NULL, 3);
    pthread_barrier_init(&go, NULL, 3);
    for (int i = 0; i < 2; ++i) {
      pthread_create(&t[i], NULL, worker, NULL);
    }
    pthread_barrier_wait(&barrier);
    bt_ready();
    pthread_barrier_wait(&go);
    for (int i = 0; i < 2; ++i) {
      pthread_join(t[i], NULL);
    }
    return 0;
  }
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = bt_handler;
  sigaction(SIGUSR1, &sa, NULL);
  bt_run();
  bt_raise();
  return 0;
}
