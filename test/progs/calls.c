// A known call tree for the branch-trace tests: main -> outer -> (middle -> leaf) x2, then
// outer -> leaf; optional modes: "loop N" calls leaf N more times (buffer overflow), "signal"
// runs a SIGUSR1 handler, "threads" runs outer in two threads
// once main has called ready().
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

volatile int sink;

__attribute__((noinline)) void leaf(int x) {
  sink += x;
}

__attribute__((noinline)) void middle(int x) {
  leaf(x);
  sink += 1;
}

__attribute__((noinline)) void outer(void) {
  middle(1);
  middle(2);
  leaf(3);
}

__attribute__((noinline)) void done(void) {
  sink += 100;
}

static void handler(int sig) {
  leaf(sig);
}

static pthread_barrier_t barrier;

// Called once both workers exist and before they run: where a test starts recording.
__attribute__((noinline)) void ready(void) {
  sink += 10;
}

static void* worker(void* arg) {
  (void)arg;
  pthread_barrier_wait(&barrier);
  outer();
  return NULL;
}

int main(int argc, char** argv) {
  if (argc > 2 && strcmp(argv[1], "loop") == 0) {
    int n = atoi(argv[2]);
    for (int i = 0; i < n; ++i) {
      leaf(i);
    }
    done();
    return 0;
  }
  if (argc > 1 && strcmp(argv[1], "signal") == 0) {
    signal(SIGUSR1, handler);
    raise(SIGUSR1);
    done();
    return 0;
  }
  if (argc > 1 && strcmp(argv[1], "threads") == 0) {
    pthread_t t[2];
    pthread_barrier_init(&barrier, NULL, 3);
    for (int i = 0; i < 2; ++i) {
      pthread_create(&t[i], NULL, worker, NULL);
    }
    ready();
    pthread_barrier_wait(&barrier);
    for (int i = 0; i < 2; ++i) {
      pthread_join(t[i], NULL);
    }
    done();
    return 0;
  }
  outer();
  done();
  outer();
  done();
  return 0;
}
