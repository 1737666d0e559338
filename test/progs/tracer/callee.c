/* Functions a tracer test calls inside the running program (tracer/linux/remote_syscalls.hpp),
 * and a main that sleeps in a syscall meanwhile: `callee N [W]` sleeps N times 100 ms (and so
 * do W worker threads of its own), then says how many ticks it counted and how many sleeps
 * were cut short (none, if a syscall the call interrupted restarts). It prints "ready" first,
 * once its workers run. `callee N 0 fork` then forks and says whether fork's result was the
 * child's pid; `callee N W suspend` instead, after its sleeps, waits in sigsuspend until a
 * SIGUSR1 and says only how sigsuspend ended and how often the handler ran. */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

volatile long calls;

__attribute__((noinline)) long callee_add(long a, long b, const char* text) {
  ++calls;
  return a + b + (long)strlen(text);
}

/* Clobbers the vector registers and the flags, as any libc function may. */
__attribute__((noinline)) double callee_float(double x) {
  volatile double y = x;
  for (int i = 0; i < 10; ++i) {
    y = y * 1.5 + 0.25;
  }
  return y;
}

__attribute__((noinline)) void callee_crash(void) { *(volatile int*)16 = 1; }

__attribute__((noinline)) void callee_spin(void) {
  for (;;) {
    ++calls;
  }
}

/* The loader's entry points, resolved by the dynamic linker, for the tests to call. */
void* (*volatile keep_dlopen)(const char*, int) = dlopen;
void* (*volatile keep_dlsym)(void*, const char*) = dlsym;
int (*volatile keep_dlclose)(void*) = dlclose;

static int rounds = 50;
static long worker_ticks, worker_cut;

/* One round of sleep: 1 if the sleep was cut short (a stop of the tracer's must restart it). */
__attribute__((noinline)) static int sleep_round(void) {
  struct timespec ts = {0, 100 * 1000 * 1000};
  return nanosleep(&ts, 0) != 0;
}

static void* worker(void* arg) {
  (void)arg;
  for (int i = 0; i < rounds; ++i) {
    __atomic_add_fetch(&worker_cut, sleep_round(), __ATOMIC_SEQ_CST);
    __atomic_add_fetch(&worker_ticks, 1, __ATOMIC_SEQ_CST);
  }
  return 0;
}

static volatile int usr1_handled;

static void on_usr1(int sig) {
  (void)sig;
  ++usr1_handled;
}

/* SIGUSR1 handled, and blocked but while waiting for it. */
static void block_usr1(void) {
  struct sigaction action;
  memset(&action, 0, sizeof action);
  action.sa_handler = on_usr1;
  sigaction(SIGUSR1, &action, 0);
  sigset_t usr1;
  sigemptyset(&usr1);
  sigaddset(&usr1, SIGUSR1);
  sigprocmask(SIG_BLOCK, &usr1, 0);
}

/* Waits under sigsuspend's mask for SIGUSR1: EINTR once its handler ran. */
static void suspend_for_usr1(void) {
  sigset_t nothing;
  sigemptyset(&nothing);
  const int r = sigsuspend(&nothing);
  sigset_t now;
  sigprocmask(SIG_BLOCK, 0, &now);
  printf("sigsuspend=%s usr1=%s handled=%d\n", r == -1 && errno == EINTR ? "EINTR" : "other",
         sigismember(&now, SIGUSR1) ? "blocked" : "unblocked", usr1_handled);
}

/* Forks a child that exits at once: whether the parent's fork said the child's pid. */
static void fork_and_tell(void) {
  const pid_t child = fork();
  if (child == 0) {
    _exit(0);
  }
  printf(" fork=%s", child > 0 && waitpid(child, 0, 0) == child ? "child" : "lost");
}

int main(int argc, char** argv) {
  rounds = argc > 1 ? atoi(argv[1]) : 50;
  const int workers = argc > 2 ? atoi(argv[2]) : 0;
  const char* then = argc > 3 ? argv[3] : "";
  const int suspend = strcmp(then, "suspend") == 0;
  if (suspend) {
    block_usr1();
  }
  pthread_t threads[8];
  for (int i = 0; i < workers && i < 8; ++i) {
    pthread_create(&threads[i], 0, worker, 0);
  }
  printf("ready\n");
  fflush(stdout);
  long ticks = 0, cut = 0;
  for (int i = 0; i < rounds; ++i) {
    cut += sleep_round();
    ++ticks;
  }
  for (int i = 0; i < workers && i < 8; ++i) {
    pthread_join(threads[i], 0);
  }
  if (suspend) {
    suspend_for_usr1();
    return 0;
  }
  printf("ticks=%ld calls=%ld cut=%ld", ticks, calls, cut);
  if (workers > 0) {
    printf(" worker_ticks=%ld worker_cut=%ld", worker_ticks, worker_cut);
  }
  if (strcmp(then, "fork") == 0) {
    fork_and_tell();
  }
  printf("\n");
  return 0;
}
