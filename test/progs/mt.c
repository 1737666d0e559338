/* mt.c - multi-threaded scenarios for the thread, watchpoint and signal tests; argv[1] picks:
   pair     2 workers leave a barrier together and both call hit()
   bp8      8 workers wait on a barrier; main calls all_started() once all are blocked
   watch    4 writers each add to `shared` 3 times (under a lock); a reader reads it
   signals  a worker sends itself SIGUSR1 (tgkill) 3 times, then SIGUSR2 once
   latesig  a worker naps 300 ms, then sends itself SIGUSR1 once; main waits for it
   sigpair  2 workers leave a barrier together and each send themselves SIGUSR1 50 times
   leaderexit  a worker joins the main thread, which calls checkpoint(1) and pthread_exit()
   bploop   2 workers bump a counter in a tight loop (label looper:bump), 2000000 times each
   segv     a worker named "crasher" writes through a bad pointer
   life     checkpoint() with worker A alive, then again after A exited and B started
   storm [N] 20 rounds of N threads (10; up to 100) created, tick() called, threads joined
   steplock 2 spinners bump `spins`; main runs lock_step() for a `next` under scheduler-locking
   stopcont a child process sends SIGSTOP, then SIGCONT, to this one while 2 threads count
   many N   N threads that sleep and count until killed (attach, bench); prints pid=
   threadexec PROG  2 threads sleep; a third calls exec_from_thread(), then execs PROG */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static pthread_barrier_t barrier;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
volatile long shared;
volatile long observed;
volatile int usr1_count, usr2_count;
volatile long spins;
volatile long rounds;
volatile unsigned long counters[4096];
volatile int release_all;

__attribute__((noinline)) void all_started(void) { __asm__ volatile("" ::: "memory"); }
__attribute__((noinline)) void hit(int id) { __asm__ volatile("" ::"r"(id) : "memory"); }
__attribute__((noinline)) void checkpoint(int n) { __asm__ volatile("" ::"r"(n) : "memory"); }
__attribute__((noinline)) void tick(long n) { rounds = n; }
__attribute__((noinline)) void worker_body(int id) { __asm__ volatile("" ::"r"(id) : "memory"); }

static void nap_ms(long ms) {
  struct timespec d = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&d, NULL);
}

static void* pair_worker(void* arg) {
  pthread_barrier_wait(&barrier);
  hit((int)(long)arg);
  return 0;
}

static int run_pair(void) {
  pthread_t t[2];
  pthread_barrier_init(&barrier, 0, 2);
  for (long i = 0; i < 2; i++) {
    pthread_create(&t[i], 0, pair_worker, (void*)(i + 1));
  }
  for (int i = 0; i < 2; i++) {
    pthread_join(t[i], 0);
  }
  printf("pair done\n");
  return 0;
}

static void* bp8_worker(void* arg) {
  worker_body((int)(long)arg);
  pthread_barrier_wait(&barrier);
  while (!release_all) {
    nap_ms(5);
  }
  return 0;
}

static int run_bp8(void) {
  pthread_t t[8];
  pthread_barrier_init(&barrier, 0, 9);
  for (long i = 0; i < 8; i++) {
    pthread_create(&t[i], 0, bp8_worker, (void*)i);
  }
  pthread_barrier_wait(&barrier);
  all_started();
  release_all = 1;
  for (int i = 0; i < 8; i++) {
    pthread_join(t[i], 0);
  }
  return 0;
}

static void* writer(void* arg) {
  for (int i = 0; i < 3; i++) {
    pthread_mutex_lock(&lock);
    shared += (long)arg;
    pthread_mutex_unlock(&lock);
    nap_ms(1);
  }
  return 0;
}

static void* reader(void* arg) {
  (void)arg;
  nap_ms(30);
  observed = shared;
  return 0;
}

static int run_watch(void) {
  pthread_t w[4], r;
  for (long i = 0; i < 4; i++) {
    pthread_create(&w[i], 0, writer, (void*)(i + 1));
  }
  for (int i = 0; i < 4; i++) {
    pthread_join(w[i], 0);
  }
  pthread_create(&r, 0, reader, 0);
  pthread_join(r, 0);
  printf("shared=%ld observed=%ld\n", shared, observed);
  return shared == 30 && observed == 30 ? 0 : 1;
}

static void on_signal(int sig) {
  if (sig == SIGUSR1) {
    __atomic_add_fetch(&usr1_count, 1, __ATOMIC_SEQ_CST);  /* two threads may count at once */
  } else {
    usr2_count++;
  }
}

static void* signaller(void* arg) {
  (void)arg;
  pid_t tid = (pid_t)syscall(SYS_gettid);
  for (int i = 0; i < 3; i++) {
    syscall(SYS_tgkill, getpid(), tid, SIGUSR1);
  }
  syscall(SYS_tgkill, getpid(), tid, SIGUSR2);
  return 0;
}

static void* late_signaller(void* arg) {
  (void)arg;
  nap_ms(300);
  syscall(SYS_tgkill, getpid(), (pid_t)syscall(SYS_gettid), SIGUSR1);
  return 0;
}

static int run_late_signal(void) {
  pthread_t t;
  signal(SIGUSR1, on_signal);
  pthread_create(&t, 0, late_signaller, 0);
  pthread_join(t, 0);
  return 0;
}

static void* pair_signaller(void* arg) {
  (void)arg;
  pthread_barrier_wait(&barrier);
  for (int i = 0; i < 50; i++) {
    syscall(SYS_tgkill, getpid(), (pid_t)syscall(SYS_gettid), SIGUSR1);
  }
  return 0;
}

static int run_signal_pair(void) {
  pthread_t t[2];
  signal(SIGUSR1, on_signal);
  pthread_barrier_init(&barrier, 0, 2);
  for (int i = 0; i < 2; i++) pthread_create(&t[i], 0, pair_signaller, 0);
  for (int i = 0; i < 2; i++) pthread_join(t[i], 0);
  printf("usr1=%d\n", usr1_count);
  return 0;
}

static void* looper(void* arg) {
  volatile unsigned long* mine = &counters[(long)arg];
  for (long i = 0; i < 2000000; i++) {
  bump: __attribute__((unused));
    (*mine)++;
  }
  return 0;
}

static int run_bp_loop(void) {
  pthread_t t[2];
  for (long i = 0; i < 2; i++) pthread_create(&t[i], 0, looper, (void*)(i + 1));
  for (int i = 0; i < 2; i++) pthread_join(t[i], 0);
  return 0;
}

static pthread_t main_thread;

static void* join_main(void* arg) {
  (void)arg;
  pthread_join(main_thread, 0);
  return 0;
}

static int run_leader_exit(void) {
  pthread_t t;
  main_thread = pthread_self();
  pthread_create(&t, 0, join_main, 0);
  checkpoint(1);
  pthread_exit(0);
}

static int run_signals(void) {
  pthread_t t;
  signal(SIGUSR1, on_signal);
  signal(SIGUSR2, on_signal);
  pthread_create(&t, 0, signaller, 0);
  pthread_join(t, 0);
  printf("usr1=%d usr2=%d\n", usr1_count, usr2_count);
  return 0;
}

static void* crasher(void* arg) {
  prctl(PR_SET_NAME, "crasher");
  *(volatile int*)arg = 1;
  return 0;
}

static int run_segv(void) {
  pthread_t t;
  pthread_create(&t, 0, crasher, (void*)0x28);
  pthread_join(t, 0);
  return 0;
}

static void* named_sleeper(void* arg) {
  prctl(PR_SET_NAME, (const char*)arg);
  while (!release_all) {
    nap_ms(2);
  }
  return 0;
}

static int run_life(void) {
  pthread_t a, b;
  pthread_create(&a, 0, named_sleeper, "life-A");
  nap_ms(20);
  checkpoint(1);
  release_all = 1;
  pthread_join(a, 0);
  release_all = 0;
  pthread_create(&b, 0, named_sleeper, "life-B");
  nap_ms(20);
  checkpoint(2);
  release_all = 1;
  pthread_join(b, 0);
  return 0;
}

static void* short_lived(void* arg) {
  counters[(long)arg % 4096]++;
  return 0;
}

static int run_storm(long n) {
  for (long r = 0; r < 20; r++) {
    pthread_t t[100];
    for (long i = 0; i < n; i++) {
      pthread_create(&t[i], 0, short_lived, (void*)(r * n + i));
    }
    tick(r);
    for (int i = 0; i < n; i++) {
      pthread_join(t[i], 0);
    }
  }
  printf("storm done\n");
  return 0;
}

static void* spinner(void* arg) {
  (void)arg;
  while (!release_all) {
    __atomic_add_fetch(&spins, 1, __ATOMIC_RELAXED);
  }
  return 0;
}

__attribute__((noinline)) long lock_step(void) {
  long before = spins;
  long after = spins;
  return after - before;
}

/* Returns only once the spinners ran: a `next` over it needs the other threads running. */
__attribute__((noinline)) void wait_for_spins(void) {
  long target = spins + 1000;
  while (spins < target) {
  }
}

static int run_steplock(void) {
  pthread_t t[2];
  for (int i = 0; i < 2; i++) {
    pthread_create(&t[i], 0, spinner, 0);
  }
  while (spins < 1000) {
  }
  long d = lock_step();
  wait_for_spins();
  release_all = 1;
  for (int i = 0; i < 2; i++) {
    pthread_join(t[i], 0);
  }
  printf("delta=%ld\n", d);
  return 0;
}

static void* counter_thread(void* arg);

static int run_stopcont(void) {
  pthread_t t[2];
  for (long i = 0; i < 2; i++) {
    pthread_create(&t[i], 0, counter_thread, (void*)(i + 1));
  }
  pid_t parent = getpid();
  pid_t child = fork();
  if (child == 0) {
    nap_ms(50);
    kill(parent, SIGSTOP);
    nap_ms(100);
    kill(parent, SIGCONT);
    _exit(0);
  }
  for (int i = 0; i < 40; i++) {
    nap_ms(10);
  }
  printf("stopcont done counters=%d\n", counters[1] > 0 && counters[2] > 0);
  return 0;
}

static void* counter_thread(void* arg) {
  long id = (long)arg;
  for (;;) {
    counters[id % 4096]++;
    nap_ms(10);
  }
  return 0;
}

static int run_many(int n) {
#ifdef PR_SET_PTRACER
  prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
#endif
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, 64 * 1024);
  for (long i = 0; i < n; i++) {
    pthread_t t;
    pthread_create(&t, &attr, counter_thread, (void*)(i + 1));
  }
  printf("pid=%d\n", (int)getpid());
  fflush(stdout);
  for (;;) {
    counters[0]++;
    nap_ms(10);
  }
  return 0;
}

__attribute__((noinline)) void exec_from_thread(void) { __asm__ volatile("" ::: "memory"); }

static void* sleeper_thread(void* arg) {
  (void)arg;
  for (;;) {
    sleep(1);
  }
  return NULL;
}

static const char* exec_target;

static void* execing_thread(void* arg) {
  (void)arg;
  exec_from_thread();
  execl(exec_target, exec_target, (char*)NULL);
  perror("execl");
  exit(1);
}

static int run_thread_exec(const char* program) {
  exec_target = program;
  pthread_t t[3];
  pthread_create(&t[0], 0, sleeper_thread, NULL);
  pthread_create(&t[1], 0, sleeper_thread, NULL);
  pthread_create(&t[2], 0, execing_thread, NULL);
  pthread_join(t[2], NULL);
  return 1;
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "";
  setvbuf(stdout, NULL, _IONBF, 0);
  if (!strcmp(mode, "pair")) return run_pair();
  if (!strcmp(mode, "bp8")) return run_bp8();
  if (!strcmp(mode, "watch")) return run_watch();
  if (!strcmp(mode, "signals")) return run_signals();
  if (!strcmp(mode, "latesig")) return run_late_signal();
  if (!strcmp(mode, "sigpair")) return run_signal_pair();
  if (!strcmp(mode, "bploop")) return run_bp_loop();
  if (!strcmp(mode, "leaderexit")) return run_leader_exit();
  if (!strcmp(mode, "segv")) return run_segv();
  if (!strcmp(mode, "life")) return run_life();
  if (!strcmp(mode, "storm")) {
    long n = argc > 2 ? atol(argv[2]) : 10;
    return run_storm(n < 1 || n > 100 ? 10 : n);
  }
  if (!strcmp(mode, "steplock")) return run_steplock();
  if (!strcmp(mode, "threadexec") && argc > 2) return run_thread_exec(argv[2]);
  if (!strcmp(mode, "stopcont")) return run_stopcont();
  if (!strcmp(mode, "many")) return run_many(argc > 2 ? atoi(argv[2]) : 50);
  fprintf(stderr, "usage: mt pair|stopcont|bp8|watch|signals|latesig|sigpair|bploop|leaderexit|segv|life|storm|steplock|many N\n");
  return 2;
}
