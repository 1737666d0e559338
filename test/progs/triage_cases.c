/* Programs for hindsight triage, one per mode (argv[1]):
 *   returned  a pointer planted by a function that has returned is used later (SIGSEGV)
 *   fnptr     a call through a function pointer an overflow corrupted (SIGSEGV, frame #0 ??)
 *   abort     an assertion fails (SIGABRT)
 *   thread    a second thread crashes while two others run (SIGSEGV)
 *   handled   signals with handlers, then a normal exit 0
 *   exit      echoes stdin to stdout, writes to stderr, exits with status 3
 *   hang      runs for ever (for --timeout)
 *   inlined   crashes inside a function the compiler inlined (always_inline, even at -O0)
 *   dlopen    loads libm, calls cos, unloads it, then crashes as `returned` does
 *   fork      a forked child crashes as `returned` does; the parent exits with 0
 *   killme    two threads run until something kills the process from outside (prints
 *             "ready PID", then "looping" after the main thread's first round)
 */
#include <sys/wait.h>
#include <dlfcn.h>
#include <assert.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int* slot;
static int table[4] = {1, 2, 3, 4};

#ifdef HS_MOVED_CODE
/* triage_cases_moved: this code comes first, so every function below lies elsewhere. */
__attribute__((used, noinline)) int moved_code(int x) {
  volatile int acc = x;
  for (int i = 0; i < 64; ++i) {
    acc = acc * 31 + i;
    if (acc % 7 == 3) {
      acc ^= 0x55aa;
    }
  }
  return acc;
}
#endif

/* Picks where consume() will write: a bad choice, made and forgotten. */
static void prepare(int which) {
  if (which > 3) {
    slot = NULL; /* the cause */
  } else {
    slot = &table[which];
  }
}

static int checksum(const int* values, int n) {
  int sum = 0;
  for (int i = 0; i < n; ++i) {
    sum += values[i] * (i + 1);
  }
  return sum;
}

/* killme: the main thread churns memory, a second one ticks. */
static void churn(void) {
  char* block = malloc(4096);
  memset(block, 1, 4096);
  free(block);
  checksum(table, 4);
}

static void* ticker(void* arg) {
  (void)arg;
  for (;;) {
    checksum(table, 4);
    usleep(500);
  }
  return NULL;
}

static void consume(int value) {
  *slot = value; /* the crash */
}

/* inlined: the write happens in store_through's code inlined into fill_through. */
static inline __attribute__((always_inline)) void store_through(int* p, int v) {
  *p = v; /* the inlined crash */
}

__attribute__((noinline)) static void fill_through(int* p) {
  store_through(p, checksum(table, 4)); /* the inlined call */
}

static int crash_after_return(void) {
  prepare(7);
  int sum = checksum(table, 4);
  consume(sum);
  return sum;
}

struct handler {
  char name[8];
  void (*run)(int);
};

static void greet(int n) { printf("hello %d\n", n); }

static void fill_name(struct handler* h, const char* text) {
  memcpy(h->name, text, strlen(text)); /* no bound: overwrites run */
}

static void call_corrupted(void) {
  struct handler h = {"", greet};
  fill_name(&h, "overflow\xef\xbe\xad\xde");
  h.run(1);
}

static int validate(int n) {
  assert(n < 10 && "n must be small");
  return n;
}

static volatile int spinning = 1;

static void* spin(void* arg) {
  (void)arg;
  while (spinning) {
    checksum(table, 4);
  }
  return NULL;
}

static void* worker_crash(void* arg) {
  (void)arg;
  usleep(100 * 1000);
  prepare(9);
  consume(checksum(table, 4));
  return NULL;
}

static volatile sig_atomic_t handled;
static void on_signal(int sig) { handled += sig; }

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "returned";
  if (strcmp(mode, "returned") == 0) {
    return crash_after_return();
  }
  if (strcmp(mode, "partial") == 0) {  // output with no newline at its end, then the crash
    fputs("half a line", stdout);
    fflush(stdout);
    return crash_after_return();
  }
  if (strcmp(mode, "fnptr") == 0) {
    call_corrupted();
    return 0;
  }
  if (strcmp(mode, "abort") == 0) {
    return validate(argc + 40);
  }
  if (strcmp(mode, "thread") == 0) {
    pthread_t a, b, c;
    pthread_create(&a, NULL, spin, NULL);
    pthread_create(&b, NULL, spin, NULL);
    pthread_create(&c, NULL, worker_crash, NULL);
    pthread_join(c, NULL);
    return 0;
  }
  if (strcmp(mode, "handled") == 0) {
    signal(SIGUSR1, on_signal);
    signal(SIGALRM, on_signal);
    raise(SIGUSR1);
    alarm(1);
    pause();
    signal(SIGPIPE, SIG_IGN);
    raise(SIGPIPE);
    return handled == SIGUSR1 + SIGALRM ? 0 : 1;
  }
  if (strcmp(mode, "exit") == 0) {
    char line[256];
    while (fgets(line, sizeof line, stdin) != NULL) {
      fputs(line, stdout);
    }
    fputs("to stderr\n", stderr);
    return 3;
  }
  if (strcmp(mode, "dlopen") == 0) {
    void* libm = dlopen("libm.so.6", RTLD_NOW);
    double (*cosine)(double) = libm != NULL ? (double (*)(double))dlsym(libm, "cos") : NULL;
    printf("cos(0) = %g\n", cosine != NULL ? cosine(0.0) : -1.0);
    fflush(stdout); /* before the crash, which would lose a pipe's buffer */
    if (libm != NULL) {
      dlclose(libm);
    }
    return crash_after_return();
  }
  if (strcmp(mode, "fork") == 0) {
    const pid_t child = fork();
    if (child == 0) {
      return crash_after_return();
    }
    int status = 0;
    waitpid(child, &status, 0);
    return 0;
  }
  if (strcmp(mode, "killme") == 0) {
    pthread_t t;
    pthread_create(&t, NULL, ticker, NULL);
    printf("ready %d\n", (int)getpid());
    fflush(stdout);
    /* "looping" after one round, with a bare write: its calls into libc are bound (lazily,
       through ld.so) and printf is done, so a slow collector killed soon after has the loop
       in its newest history, not the dynamic linker or stdio. */
    churn();
    usleep(1000);
    if (write(1, "looping\n", 8) != 8) {
      return 1;
    }
    for (;;) {
      churn();
      usleep(1000);
    }
  }
  if (strcmp(mode, "inlined") == 0) {
    prepare(8);
    fill_through(slot);
  }
  if (strcmp(mode, "hang") == 0) {
    for (;;) {
      checksum(table, 4);
      usleep(1000);
    }
  }
  fprintf(stderr, "unknown mode %s\n", mode);
  return 2;
}
