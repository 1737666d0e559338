// The differential corpus of the software collectors: each mode runs one kind of control flow
// between diff_begin() and diff_end(), where the test starts and ends recording. SoftEmulate's
// branches must equal SoftStep's there, record for record. Built -O2 (jump tables, tail calls)
// and with lazy PLT binding.
//   corpus loops|recursion|switch|fptr|tailcall|longjmp|signal|threads|vdso|plt|dlopen LIB|smc|jit|rep|fork|restart
// (fork: the child runs loops() and exits, the parent waits: each has its own history;
// restart: a signal interrupts a blocked read(), whose handler runs and the read starts again)
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

volatile long sink;

NOINLINE void diff_begin(void) { __asm__ volatile("" ::: "memory"); }
NOINLINE void diff_end(void) { __asm__ volatile("" ::: "memory"); }

NOINLINE static void loops(void) {
  for (int i = 0; i < 40; ++i) {
    for (int j = 0; j < i % 7; ++j) {
      sink += (i ^ j) & 1 ? j : -i;
    }
  }
}

NOINLINE static long fib(long n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

NOINLINE static long pick(int v) {
  switch (v) {
    case 0: return 11;
    case 1: return sink + 3;
    case 2: return 17;
    case 3: return sink * 5;
    case 4: return 23;
    case 5: return sink - 7;
    case 6: return 31;
    case 7: return sink ^ 9;
    case 8: return 41;
    default: return -1;
  }
}

NOINLINE static long add1(long x) { return x + 1; }
NOINLINE static long twice(long x) { return x * 2; }
NOINLINE static long neg(long x) { return -x; }
static long (*const ops[])(long) = {add1, twice, neg};

NOINLINE static long leaf_tail(long x) { return x * 3 + sink; }
NOINLINE static long tail(long x) { return leaf_tail(x + 1); }  // -O2: jmp leaf_tail

static jmp_buf env;
NOINLINE static void jump_back(int depth) {
  if (depth < 0) {
    return;
  }
  if (depth == 0) {
    longjmp(env, 7);
  }
  jump_back(depth - 1);
  sink++;
}

static void on_usr1(int sig) { sink += sig; }
static void on_alarm(int sig) { sink += sig; }

static pthread_barrier_t start, done, release;
// Each worker's own deterministic part (the test compares the branches from in here).
NOINLINE long thread_work(long n) {
  long acc = 0;
  for (long i = 0; i < 200 + n * 10; ++i) {
    acc += ops[i % 3](i);
  }
  return acc;
}

NOINLINE static void* worker(void* arg) {
  long n = (long)arg;
  pthread_barrier_wait(&start);
  sink += thread_work(n);
  pthread_barrier_wait(&done);
  pthread_barrier_wait(&release);
  return NULL;
}

// Code written at run time: mov $imm,%eax; ret, then a version with a loop in it.
NOINLINE static void write_generated(unsigned char* code, int version) {
  static const unsigned char v1[] = {0xb8, 0x2a, 0x00, 0x00, 0x00, 0xc3};  // mov $42,%eax; ret
  static const unsigned char v2[] = {0x31, 0xc0,                          // xor %eax,%eax
                                     0xb9, 0x05, 0x00, 0x00, 0x00,        // mov $5,%ecx
                                     0x01, 0xc8,                          // add %ecx,%eax
                                     0xe2, 0xfc,                          // loop .-2
                                     0xc3};                               // ret
  if (version == 1) {
    memcpy(code, v1, sizeof v1);
  } else {
    memcpy(code, v2, sizeof v2);
  }
  __builtin___clear_cache((char*)code, (char*)code + 16);
}

NOINLINE static long run_generated(unsigned char* code, int version) {
  write_generated(code, version);
  return ((long (*)(void))code)();
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "loops";
  pthread_t t[4];
  unsigned char* code = NULL;
  if (strcmp(mode, "threads") == 0) {
    pthread_barrier_init(&start, NULL, 5);
    pthread_barrier_init(&done, NULL, 5);
    pthread_barrier_init(&release, NULL, 5);
    for (long i = 0; i < 4; ++i) {
      pthread_create(&t[i], NULL, worker, (void*)i);
    }
  } else if (strcmp(mode, "signal") == 0) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr1;
    sigaction(SIGUSR1, &sa, NULL);
  } else if (strcmp(mode, "smc") == 0) {
    code = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  } else if (strcmp(mode, "jit") == 0) {
    code = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  }

  diff_begin();
  if (strcmp(mode, "loops") == 0) {
    loops();
  } else if (strcmp(mode, "recursion") == 0) {
    sink = fib(12);
  } else if (strcmp(mode, "switch") == 0) {
    for (int i = 0; i < 30; ++i) {
      sink += pick(i % 11);
    }
  } else if (strcmp(mode, "fptr") == 0) {
    for (int i = 0; i < 30; ++i) {
      sink = ops[i % 3](sink);
    }
  } else if (strcmp(mode, "tailcall") == 0) {
    for (int i = 0; i < 10; ++i) {
      sink += tail(i);
    }
  } else if (strcmp(mode, "longjmp") == 0) {
    if (setjmp(env) == 0) {
      jump_back(5);
    }
    sink++;
  } else if (strcmp(mode, "signal") == 0) {
    raise(SIGUSR1);
    sink++;
  } else if (strcmp(mode, "threads") == 0) {
    pthread_barrier_wait(&start);
    pthread_barrier_wait(&done);
  } else if (strcmp(mode, "vdso") == 0) {
    struct timespec ts;
    for (int i = 0; i < 3; ++i) {
      clock_gettime(CLOCK_MONOTONIC, &ts);
      sink += ts.tv_nsec & 1;
    }
  } else if (strcmp(mode, "plt") == 0) {
    // First calls of these: the lazy PLT resolves each on the way.
    sink += labs(-5) + atoi("12") + (long)strlen(mode) + (long)getpid() % 2;
  } else if (strcmp(mode, "dlopen") == 0 && argc > 2) {
    for (int round = 0; round < 2; ++round) {
      void* lib = dlopen(argv[2], RTLD_NOW);
      if (lib == NULL) {
        return 2;
      }
      long (*fn)(long) = (long (*)(long))dlsym(lib, "plugin_work");
      sink += fn(round + 3);
      dlclose(lib);
    }
  } else if (strcmp(mode, "smc") == 0) {
    sink += run_generated(code, 1);
    sink += run_generated(code, 2);
    sink += run_generated(code, 1);
  } else if (strcmp(mode, "jit") == 0) {
    // A JIT's W^X discipline: written while writable, run while executable, rewritten.
    for (int version = 1; version <= 2; ++version) {
      mprotect(code, 4096, PROT_READ | PROT_WRITE);
      write_generated(code, version);
      mprotect(code, 4096, PROT_READ | PROT_EXEC);
      sink += ((long (*)(void))code)();
    }
  } else if (strcmp(mode, "fork") == 0) {
    pid_t child = fork();
    if (child == 0) {
      loops();
      _exit(0);
    }
    int status = 0;
    waitpid(child, &status, 0);
    sink += status;
  } else if (strcmp(mode, "restart") == 0) {
    int fds[2];
    if (pipe(fds) != 0) {
      return 2;
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGALRM, &sa, NULL);
    pid_t writer = fork();
    if (writer == 0) {
      usleep(300000);
      _exit(write(fds[1], "x", 1) == 1 ? 0 : 1);
    }
    struct itimerval once = {{0, 0}, {0, 50000}};
    setitimer(ITIMER_REAL, &once, NULL);
    char c = 0;
    sink += read(fds[0], &c, 1);  // interrupted by SIGALRM, restarted
    waitpid(writer, NULL, 0);
  } else if (strcmp(mode, "rep") == 0) {
    char src[64], dst[64];
    size_t n = sizeof src;
    char* d = src;
    __asm__ volatile("rep stosb" : "+D"(d), "+c"(n) : "a"(0x5a) : "memory");
    const char* s = src;
    d = dst;
    n = sizeof src;
    __asm__ volatile("rep movsb" : "+D"(d), "+S"(s), "+c"(n) : : "memory");
    sink += dst[63];
  }
  diff_end();
  if (strcmp(mode, "threads") == 0) {
    pthread_barrier_wait(&release);
    for (int i = 0; i < 4; ++i) {
      pthread_join(t[i], NULL);
    }
  }
  return 0;
}
