/* What a program computes and sees of itself where a recorder in the process could change it
 * (issue 55). argv[1] says which; each prints what it found, the same natively and recorded:
 *   gs-none  a program that never set %gs: its base as arch_prctl and rdgsbase give it
 *   gs-own   a %gs base of its own, set in a constructor (before any recording): read through
 *            %gs, set again with arch_prctl and with wrgsbase while recording, read after a stop
 *            at `stop_point` (GDB's), and in a thread made afterwards (it inherits the base)
 *   clone-vm a child made by clone(CLONE_VM | SIGCHLD): a process that shares main's memory
 *            (not a fork), which computes while main does and exits
 *   jit-views a W^X JIT: code written through a read-write view of a memfd and run through a
 *            read-execute view of it, never reprotected, rewritten before each of 9,000 calls;
 *            by main and a second thread at once, each in its own memfd
 *   jit-reprotect a JIT thread (main) that rewrites code while another thread runs it: two pages
 *            in turn made read-write, given new code and made read-execute again, then published;
 *            the runner calls the page published last, which must return its version
 *   branches 450,000 taken branches between two stops (`stop_point`, then `done`): calls, returns
 *            and a loop's jumps
 *   rate     sorts for ever, printing each chunk's time in microseconds and its checksum (the
 *            same every time): a program's rate before, while and after it is recorded
 *   siginfo  signals with their siginfo while main computes: sigqueue values from a child
 *            (a real-time signal: each one queued), a POSIX timer's, SIGCHLD's pid and status
 *   rseq     per-CPU counters, eight threads adding one at a time in an rseq critical section
 *            (glibc's registered area): an update cut by preemption or migration is aborted and
 *            made again, so that none is lost
 * Then main calls `done`. With a second argument `wait` it first waits for `go` to be set (an
 * attach). */
#define _GNU_SOURCE
#include <asm/prctl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/rseq.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rseq_section.h"

void stop_point(void) { __asm__ volatile("" ::: "memory"); }
void done(void) { __asm__ volatile("" ::: "memory"); }

static int have_fsgsbase(void) { return (getauxval(AT_HWCAP2) & 2) != 0; }

static uint64_t gs_by_arch_prctl(void) {
  uint64_t base = 12345;
  if (syscall(SYS_arch_prctl, ARCH_GET_GS, &base) != 0) {
    return 1;
  }
  return base;
}

static uint64_t gs_by_rdgsbase(void) {
  uint64_t base = 0;
  __asm__ volatile("rdgsbase %0" : "=r"(base));
  return base;
}

static void wrgsbase(uint64_t base) { __asm__ volatile("wrgsbase %0" ::"r"(base) : "memory"); }

static uint64_t read_gs(uint64_t offset) {
  uint64_t v = 0;
  __asm__ volatile("mov %%gs:(%1), %0" : "=r"(v) : "r"(offset) : "memory");
  return v;
}

static void add_gs(uint64_t offset, uint64_t v) {
  __asm__ volatile("add %1, %%gs:(%0)" ::"r"(offset), "r"(v) : "memory", "cc");
}

static uint64_t area_a[8] = {0, 11, 22, 33};
static uint64_t area_b[8] = {0, 101, 202, 303};
static uint64_t area_c[8] = {0, 1001, 2002, 3003};

static const char* name_of(uint64_t base) {
  if (base == (uint64_t)area_a) return "a";
  if (base == (uint64_t)area_b) return "b";
  if (base == (uint64_t)area_c) return "c";
  if (base == 0) return "0";
  return "other";
}


/* (glibc hands a constructor the program's arguments) */
__attribute__((constructor)) static void set_own_gs(int argc, char** argv) {
  if (argc > 1 && strcmp(argv[1], "gs-own") == 0) {
    syscall(SYS_arch_prctl, ARCH_SET_GS, (uint64_t)area_a);
  }
}

/* Sums through %gs in a loop (so that the loop's blocks are translated and linked). */
static uint64_t sum_through_gs(int rounds) {
  uint64_t sum = 0;
  for (int i = 0; i < rounds; ++i) {
    sum += read_gs(8 * (1 + i % 3));
    add_gs(8 * 4, 1);
  }
  return sum;
}

static void* gs_thread(void* arg) {
  (void)arg;
  printf("thread: base %s, sum %llu\n", name_of(gs_by_arch_prctl()), (unsigned long long)sum_through_gs(300));
  return NULL;
}

static int gs_own(void) {
  printf("own: base %s, sum %llu\n", name_of(gs_by_arch_prctl()), (unsigned long long)sum_through_gs(3000));
  syscall(SYS_arch_prctl, ARCH_SET_GS, (uint64_t)area_b);
  printf("set: base %s, sum %llu\n", name_of(gs_by_arch_prctl()), (unsigned long long)sum_through_gs(3000));
  if (have_fsgsbase()) {
    wrgsbase((uint64_t)area_c);
    stop_point();
    printf("wrgsbase, stop: base %s, rdgsbase %s, sum %llu\n", name_of(gs_by_arch_prctl()),
           name_of(gs_by_rdgsbase()), (unsigned long long)sum_through_gs(3000));
  } else {
    stop_point();
    printf("wrgsbase, stop: (no FSGSBASE)\n");
  }
  pthread_t t;
  pthread_create(&t, NULL, gs_thread, NULL);
  pthread_join(t, NULL);
  printf("counts: a %llu, b %llu, c %llu\n", (unsigned long long)area_a[4], (unsigned long long)area_b[4],
         (unsigned long long)area_c[4]);
  return 0;
}

static int gs_none(void) {
  printf("never set: base %s\n", name_of(gs_by_arch_prctl()));
  if (have_fsgsbase()) {
    printf("never set: rdgsbase %s\n", name_of(gs_by_rdgsbase()));
  }
  stop_point();
  printf("after a stop: base %s\n", name_of(gs_by_arch_prctl()));
  return 0;
}

/* Signals: what each handler saw that was not what was sent. */
static volatile int queued = 0, queued_bad = 0, timer_ticks = 0, timer_bad = 0, chld = 0, chld_bad = 0;
static volatile pid_t sender = 0;

static void on_queued(int sig, siginfo_t* si, void* uc) {
  (void)sig, (void)uc;
  if (si->si_code != SI_QUEUE || si->si_pid != sender || si->si_value.sival_int != 4242 + queued) {
    ++queued_bad;
  }
  ++queued;
}

static void on_timer(int sig, siginfo_t* si, void* uc) {
  (void)sig, (void)uc;
  if (si->si_code != SI_TIMER || si->si_value.sival_int != 77) {
    ++timer_bad;
  }
  ++timer_ticks;
}

static void on_chld(int sig, siginfo_t* si, void* uc) {
  (void)sig, (void)uc;
  if (si->si_code != CLD_EXITED || si->si_status != 7 || si->si_pid != sender) {
    ++chld_bad;
  }
  ++chld;
}

static void handle(int sig, void (*fn)(int, siginfo_t*, void*)) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = fn;
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  sigaction(sig, &sa, NULL);
}

static uint64_t spin(uint64_t rounds) {
  uint64_t x = 1;
  for (uint64_t i = 0; i < rounds; ++i) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
  }
  return x;
}

static int signals(void) {
  enum { kQueued = 200 };
  const int rt = SIGRTMIN + 1;
  handle(rt, on_queued);
  handle(SIGALRM, on_timer);
  handle(SIGCHLD, on_chld);
  sigset_t queued_set;
  sigemptyset(&queued_set);
  sigaddset(&queued_set, rt);
  sigprocmask(SIG_BLOCK, &queued_set, NULL);  /* (until the sender's pid is known) */
  const pid_t parent = getpid();
  const pid_t child = fork();
  if (child == 0) {
    for (int i = 0; i < kQueued; ++i) {
      union sigval v = {.sival_int = 4242 + i};
      sigqueue(parent, rt, v);
      usleep(200);
    }
    _exit(7);
  }
  sender = child;
  sigprocmask(SIG_UNBLOCK, &queued_set, NULL);
  timer_t timer;
  struct sigevent ev;
  memset(&ev, 0, sizeof ev);
  ev.sigev_notify = SIGEV_SIGNAL;
  ev.sigev_signo = SIGALRM;
  ev.sigev_value.sival_int = 77;
  timer_create(CLOCK_MONOTONIC, &ev, &timer);
  struct itimerspec every = {.it_interval = {0, 10000000}, .it_value = {0, 10000000}};
  timer_settime(timer, 0, &every, NULL);
  uint64_t x = 0;
  while (queued < kQueued || chld == 0) {
    x += spin(20000);
  }
  timer_delete(timer);
  int status = 0;
  waitpid(child, &status, 0);
  printf("sigqueue: %d, with a wrong siginfo: %d\n", queued, queued_bad);
  printf("timer: %s, with a wrong siginfo: %d\n", timer_ticks > 0 ? "ticked" : "never ticked", timer_bad);
  printf("SIGCHLD: %d, with a wrong siginfo: %d, status %d\n", chld, chld_bad, WEXITSTATUS(status));
  return x == 42 ? 3 : 0;
}

/* clone(CLONE_VM | SIGCHLD): the child sums into shared memory, main computes meanwhile. */
static volatile uint64_t child_sum = 0;

static int clone_child(void* arg) {
  (void)arg;
  uint64_t sum = 0;
  for (uint64_t i = 0; i < 2000000; ++i) {
    sum += i % 7;
  }
  child_sum = sum;
  return 5;
}

static int clone_vm(void) {
  enum { kStack = 256 << 10 };
  char* stack = malloc(kStack);
  const pid_t child = clone(clone_child, stack + kStack, CLONE_VM | SIGCHLD, NULL);
  if (child < 0) {
    printf("clone failed\n");
    return 1;
  }
  const uint64_t x = spin(3000000);
  int status = 0;
  if (waitpid(child, &status, 0) != child) {
    printf("waitpid failed\n");
    return 1;
  }
  printf("clone-vm: child sum %llu, exit %d; main %s\n", (unsigned long long)child_sum, WEXITSTATUS(status),
         x == spin(3000000) ? "same twice" : "differs");
  free(stack);
  return 0;
}

/* mov eax, value; ret (or the same through a longer way: mov ecx, value; mov eax, ecx; ret) */
static void emit_returner(uint8_t* at, int value, int longer) {
  if (longer) {
    at[0] = 0xb9;
    memcpy(at + 1, &value, 4);
    at[5] = 0x89;
    at[6] = 0xc8;
    at[7] = 0xc3;
  } else {
    at[0] = 0xb8;
    memcpy(at + 1, &value, 4);
    at[5] = 0xc3;
  }
}

static void* jit_run(void* arg) {
  long* wrong = arg;
  const int fd = memfd_create("jit", 0);
  if (fd < 0 || ftruncate(fd, 4096) != 0) {
    *wrong = -1;
    return NULL;
  }
  uint8_t* rw = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  uint8_t* rx = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_SHARED, fd, 0);
  if (rw == MAP_FAILED || rx == MAP_FAILED) {
    *wrong = -1;
    return NULL;
  }
  int (*fn)(void) = (int (*)(void))rx;
  for (int i = 0; i < 9000; ++i) {
    emit_returner(rw, i, i % 3 == 0);
    if (fn() != i) {
      ++*wrong;
    }
  }
  munmap(rw, 4096);
  munmap(rx, 4096);
  close(fd);
  return NULL;
}

#define JR_VERSIONS 1000
static uint8_t* jr_pages;
static int jr_published;  /* the version whose page runs now (0: none yet) */
static int jr_called;     /* the last version the runner called */
static long jr_wrong;

static void* jr_runner(void* arg) {
  (void)arg;
  for (;;) {
    const int v = __atomic_load_n(&jr_published, __ATOMIC_ACQUIRE);
    if (v == 0) {
      sched_yield();
      continue;
    }
    int (*fn)(void) = (int (*)(void))(jr_pages + (v % 2) * 4096);
    if (fn() != v) {
      ++jr_wrong;
    }
    __atomic_store_n(&jr_called, v, __ATOMIC_RELEASE);
    if (v == JR_VERSIONS) {
      return NULL;
    }
  }
}

static int jit_reprotect(void) {
  jr_pages = mmap(NULL, 2 * 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (jr_pages == MAP_FAILED) {
    return 1;
  }
  pthread_t t;
  pthread_create(&t, NULL, jr_runner, NULL);
  for (int v = 1; v <= JR_VERSIONS; ++v) {
    uint8_t* page = jr_pages + (v % 2) * 4096;  /* not the one the runner may be calling */
    if (mprotect(page, 4096, PROT_READ | PROT_WRITE) != 0) {
      return 1;
    }
    emit_returner(page, v, v % 3 == 0);
    if (mprotect(page, 4096, PROT_READ | PROT_EXEC) != 0) {
      return 1;
    }
    __atomic_store_n(&jr_published, v, __ATOMIC_RELEASE);
    while (__atomic_load_n(&jr_called, __ATOMIC_ACQUIRE) < v) {
      sched_yield();
    }
  }
  pthread_join(t, NULL);
  printf("jit-reprotect: %d versions, wrong %ld\n", JR_VERSIONS, jr_wrong);
  return 0;
}

static int jit_views(void) {
  long wrong_main = 0, wrong_thread = 0;
  pthread_t t;
  pthread_create(&t, NULL, jit_run, &wrong_thread);
  jit_run(&wrong_main);
  pthread_join(t, NULL);
  printf("jit-views: 9000 calls each, wrong: main %ld, thread %ld\n", wrong_main, wrong_thread);
  stop_point();  /* (a stop of GDB's: the threads' way back into the cache) */
  long wrong_alone = 0;
  jit_run(&wrong_alone);
  printf("jit-views alone: 9000 calls, wrong %ld\n", wrong_alone);
  return 0;
}

__attribute__((noinline)) static uint64_t step_once(uint64_t x) {
  __asm__ volatile("" : "+r"(x));
  return x * 3 + 1;
}

static int branches(void) {
  stop_point();
  uint64_t x = 1;
  for (int i = 0; i < 150000; ++i) { /* a call, a return and the loop's jump each */
    x = step_once(x);
  }
  printf("branches: %llu\n", (unsigned long long)(x & 0xffff));
  return 0;
}

/* One per-CPU add of 1 to counters[cpu]: 0 when committed, 1 when the kernel aborted it. */
struct percpu_counter {
  uint64_t count;
  uint64_t pad[7];
};
static struct percpu_counter counters[1024];

static int rseq_add_one(void) {
  int aborted;
  __asm__ volatile(
      HS_RSEQ_START("area")
      "  movl %%fs:4(%[area]), %%eax\n" /* cpu_id */
      "  andl $1023, %%eax\n"
      "  shlq $6, %%rax\n"
      "  addq %[counters], %%rax\n"
      "  movq (%%rax), %%rcx\n"
      "  addq $1, %%rcx\n"
      "  movq %%rcx, (%%rax)\n" /* the commit */
      "2:\n"
      "  xorl %[aborted], %[aborted]\n"
      "  jmp 5f\n"
      HS_RSEQ_SIGNATURE
      "4:\n"
      "  movl $1, %[aborted]\n"
      "5:\n"
      : [aborted] "=&r"(aborted)
      : [area] "r"(__rseq_offset), [counters] "r"(counters)
      : "rax", "rcx", "memory", "cc");
  return aborted;
}

enum { kRseqThreads = 8, kRseqAdds = 2000000 };
static pthread_barrier_t rseq_start; /* (all at once: they contend for the CPUs) */

/* A stop for GDB's dprintf now and then: threads stopped inside their sections resume there. */
__attribute__((noinline)) void rseq_tick(void) { __asm__ volatile("" ::: "memory"); }

static void* rseq_thread(void* arg) {
  long aborts = 0;
  pthread_barrier_wait(&rseq_start);
  for (int i = 0; i < kRseqAdds; ++i) {
    while (rseq_add_one() != 0) {
      ++aborts;
    }
    if (i % 100000 == 0) {
      rseq_tick();
    }
  }
  stop_point(); /* (a stop of GDB's while the others add: they leave the cache in their sections) */
  *(long*)arg = aborts;
  return NULL;
}

static int rseq_counters(void) {
  if (__rseq_size == 0) {
    printf("rseq: not registered\n");
    return 0;
  }
  pthread_t threads[kRseqThreads];
  long aborts[kRseqThreads] = {0};
  pthread_barrier_init(&rseq_start, NULL, kRseqThreads);
  for (int i = 0; i < kRseqThreads; ++i) {
    pthread_create(&threads[i], NULL, rseq_thread, &aborts[i]);
  }
  long aborted = 0;
  for (int i = 0; i < kRseqThreads; ++i) {
    pthread_join(threads[i], NULL);
    aborted += aborts[i];
  }
  uint64_t sum = 0;
  for (int i = 0; i < 1024; ++i) {
    sum += counters[i].count;
  }
  printf("rseq: %d threads x %d adds, counted %llu\n", kRseqThreads, kRseqAdds, (unsigned long long)sum);
  (void)aborted; /* (how many varies run to run: not printed) */
  return 0;
}

static int by_value(const void* a, const void* b) {
  const int x = *(const int*)a, y = *(const int*)b;
  return (x > y) - (x < y);
}

static int rate(void) {
  enum { kInts = 4000 };
  static int v[kInts];
  for (;;) {
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    uint64_t sum = 0;
    for (int round = 0; round < 40; ++round) {
      uint32_t x = 12345;
      for (int i = 0; i < kInts; ++i) {
        x = x * 1103515245u + 12345u;
        v[i] = (int)(x >> 8);
      }
      qsort(v, kInts, sizeof v[0], by_value);
      sum += (uint64_t)v[kInts / 2] + (uint64_t)v[7];
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    const long us = (t1.tv_sec - t0.tv_sec) * 1000000L + (t1.tv_nsec - t0.tv_nsec) / 1000;
    printf("chunk %ld %llu\n", us, (unsigned long long)sum);
  }
  return 0;
}

volatile int go = 0;

int main(int argc, char** argv) {
  setvbuf(stdout, NULL, _IONBF, 0);
  const char* mode = argc > 1 ? argv[1] : "";
  if (argc > 2 && strcmp(argv[2], "wait") == 0) {  /* (for an attach: until GDB sets `go`) */
    printf("waiting\n");
    while (!go) {
      usleep(1000);
    }
  }
  int rc = 2;
  if (strcmp(mode, "gs-none") == 0) {
    rc = gs_none();
  } else if (strcmp(mode, "gs-own") == 0) {
    rc = gs_own();
  } else if (strcmp(mode, "jit-views") == 0) {
    rc = jit_views();
  } else if (strcmp(mode, "jit-reprotect") == 0) {
    rc = jit_reprotect();
  } else if (strcmp(mode, "branches") == 0) {
    rc = branches();
  } else if (strcmp(mode, "rate") == 0) {
    rc = rate();
  } else if (strcmp(mode, "clone-vm") == 0) {
    rc = clone_vm();
  } else if (strcmp(mode, "siginfo") == 0) {
    rc = signals();
  } else if (strcmp(mode, "rseq") == 0) {
    rc = rseq_counters();
  } else {
    printf("usage: guest_cases gs-none|gs-own|clone-vm|jit-views|jit-reprotect|branches|rate|siginfo|rseq\n");
  }
  done();
  return rc;
}
