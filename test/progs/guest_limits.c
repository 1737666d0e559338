/* A program in a state where a guest that used its loader, its descriptors or system calls a
 * seccomp filter forbids would harm it (issue 55). argv[1] says which:
 *   loader-lock  a worker thread stops at `holding` inside dl_iterate_phdr's callback, the
 *                loader's lock held, and waits there until main has done its work
 *   no-fds       every descriptor under a low RLIMIT_NOFILE is in use
 *   seccomp      a seccomp filter refuses memfd_create (EPERM), as a container's profile may
 *   seccomp-kill a seccomp filter kills the process at any memfd_create (the program makes none)
 *   seccomp-strict  seccomp's strict mode: read, write, exit and sigreturn only (it ends with exit)
 *   as-limit     RLIMIT_AS leaves 64 MiB more than the program maps now
 * Then main works (a checksum of a sort) and calls `done`. It prints the same natively and
 * recorded. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <link.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

static volatile int in_callback = 0;
static volatile int release = 0;

void holding(void) { __asm__ volatile("" ::: "memory"); }
void done(void) { __asm__ volatile("" ::: "memory"); }

static int hold_loader_lock(struct dl_phdr_info* info, size_t size, void* data) {
  (void)info, (void)size, (void)data;
  in_callback = 1;
  holding();
  while (!release) {
    usleep(100);
  }
  return 1;
}

static void* worker(void* arg) {
  (void)arg;
  dl_iterate_phdr(hold_loader_lock, NULL);
  return NULL;
}

/* A shell sort of its own: qsort may allocate, which seccomp's strict mode would not allow. */
static void sort(int* v, int n) {
  for (int gap = n / 2; gap > 0; gap /= 2) {
    for (int i = gap; i < n; ++i) {
      const int x = v[i];
      int j = i;
      for (; j >= gap && v[j - gap] > x; j -= gap) {
        v[j] = v[j - gap];
      }
      v[j] = x;
    }
  }
}

static unsigned work(void) {
  static int v[4000];
  unsigned seed = 7;
  for (int i = 0; i < 4000; ++i) {
    seed = seed * 1103515245u + 12345u;
    v[i] = (int)(seed >> 8);
  }
  sort(v, 4000);
  unsigned sum = 0;
  for (int i = 0; i < 4000; ++i) {
    sum = sum * 31u + (unsigned)v[i];
  }
  return sum;
}

static int filter_memfd_create(unsigned verdict) {
  struct sock_filter filter[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_memfd_create, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, verdict),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  struct sock_fprog prog = {sizeof filter / sizeof filter[0], filter};
  return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 && prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) == 0 ? 0 : -1;
}

/* The bytes the process maps now (/proc/self/status VmSize). */
static unsigned long mapped_now(void) {
  char line[256];
  unsigned long kb = 0;
  FILE* f = fopen("/proc/self/status", "r");
  while (f != NULL && fgets(line, sizeof line, f) != NULL) {
    if (sscanf(line, "VmSize: %lu kB", &kb) == 1) {
      break;
    }
  }
  if (f != NULL) {
    fclose(f);
  }
  return kb * 1024;
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "";
  pthread_t t;
  int fds = 0;
  if (strcmp(mode, "loader-lock") == 0) {
    pthread_create(&t, NULL, worker, NULL);
    while (!in_callback) {
      usleep(100);
    }
  } else if (strcmp(mode, "no-fds") == 0) {
    struct rlimit lim = {32, 32};
    setrlimit(RLIMIT_NOFILE, &lim);
    while (open("/dev/null", O_RDONLY) >= 0) {
      ++fds;
    }
  } else if (strcmp(mode, "seccomp") == 0 && filter_memfd_create(SECCOMP_RET_ERRNO | 1 /* EPERM */) != 0) {
    perror("seccomp");
    return 2;
  } else if (strcmp(mode, "seccomp-kill") == 0 && filter_memfd_create(SECCOMP_RET_KILL_PROCESS) != 0) {
    perror("seccomp");
    return 2;
  } else if (strcmp(mode, "seccomp-strict") == 0) {
    /* Nothing that needs another system call: the sort is on static memory, the line written
     * with write, the end an exit. */
    char line[64];
    fflush(stdout);
    if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_STRICT, 0, 0, 0) != 0) {
      return 2;
    }
    const int n = snprintf(line, sizeof line, "%s: checksum %u\n", mode, work());
    write(1, line, (size_t)n);
    done();
    write(1, "seccomp-strict: ended (ok)\n", 27);
    syscall(SYS_exit, 0);
  } else if (strcmp(mode, "as-limit") == 0) {
    struct rlimit lim = {mapped_now() + (64ul << 20), RLIM_INFINITY};
    setrlimit(RLIMIT_AS, &lim);
  }
  printf("%s: checksum %u\n", mode, work());
  fflush(stdout);
  done();
  if (strcmp(mode, "loader-lock") == 0) {
    release = 1;
    pthread_join(t, NULL);
  }
  printf("%s: ended (%s)\n", mode, fds > 0 ? "descriptors all in use" : "ok");
  return 0;
}
