/* workers.c - four threads computing checksums for SECONDS (default 5), each checking its own
 * result every round; prints "pid=N" at start, "threads=4" once they all exist (then
 * calls all_running()), and
 * "workers ok ROUNDS" at the end (exit 0), or
 * "workers wrong" and exits 1 if any result ever differed. SIGUSR1 ends it early (a test that
 * reads its code after a detach, however slow the machine). The attach tests trace it, detach
 * and expect it to finish correctly, its code as the file has it. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static volatile int stop;
static volatile int wrong;
static long rounds[4];

__attribute__((noinline)) long checksum(long seed) {
  long acc = seed;
  for (int i = 0; i < 1000; ++i) {
    acc = (acc * 31 + i) % 1000003;
    if (acc & 1) {
      acc ^= i;
    }
  }
  return acc;
}

/* Called once the four threads run (a place for main to stop while they go on). */
__attribute__((noinline)) void all_running(void) { __asm__ volatile("" ::: "memory"); }

static void end_early(int signo) {
  (void)signo;
  stop = 1;
}

static void* worker(void* arg) {
  long n = (long)arg;
  const long want = checksum(n);
  while (!stop) {
    if (checksum(n) != want) {
      wrong = 1;
    }
    rounds[n]++;
  }
  return NULL;
}

int main(int argc, char** argv) {
  int seconds = argc > 1 ? atoi(argv[1]) : 5;
  signal(SIGUSR1, end_early);
  printf("pid=%d\n", (int)getpid());
  fflush(stdout);
  pthread_t t[4];
  for (long i = 0; i < 4; ++i) {
    pthread_create(&t[i], NULL, worker, (void*)i);
  }
  printf("threads=4\n");
  fflush(stdout);
  all_running();
  struct timespec end;
  clock_gettime(CLOCK_MONOTONIC, &end);
  end.tv_sec += seconds;
  while (!stop) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    if (now.tv_sec > end.tv_sec || (now.tv_sec == end.tv_sec && now.tv_nsec >= end.tv_nsec)) {
      break;
    }
    usleep(10000);
  }
  stop = 1;
  long total = 0;
  for (int i = 0; i < 4; ++i) {
    pthread_join(t[i], NULL);
    total += rounds[i];
  }
  printf(wrong ? "workers wrong\n" : "workers ok %ld\n", total);
  return wrong ? 1 : 0;
}
