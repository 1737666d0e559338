/* forks.c - fork and vfork in the shapes GDB's fork tests use.
     fork      the child calls child_work() and exits 7; the parent waits, calls parent_done()
     spin      the child spins forever, the parent waits for it forever (nothing may survive)
     vfork     the child execs argv[2] (or _exits 5 without one); the parent calls parent_done()
     threads   a second thread forks while the main thread runs in a loop */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

volatile int sink;

__attribute__((noinline)) int child_work(int x) {
  sink = x;
  return x + 1;
}
__attribute__((noinline)) void parent_done(int status) { sink = status; }
__attribute__((noinline)) void spin_forever(void) {
  for (;;) {
    sink++;
  }
}

static int wait_child(pid_t child) {
  int status = 0;
  waitpid(child, &status, 0);
  int code = WIFEXITED(status) ? WEXITSTATUS(status) : 100 + WTERMSIG(status);
  printf("child %d status %d\n", (int)child, code);
  fflush(stdout);
  return code;
}

static void* forking_thread(void* arg) {
  (void)arg;
  pid_t child = fork();
  if (child == 0) {
    _exit(child_work(6));
  }
  return (void*)(long)wait_child(child);
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "fork";
  setvbuf(stdout, NULL, _IONBF, 0);
  if (strcmp(mode, "fork") == 0) {
    pid_t child = fork();
    if (child == 0) {
      _exit(child_work(6));
    }
    parent_done(wait_child(child));
    return 0;
  }
  if (strcmp(mode, "spin") == 0) {
    pid_t child = fork();
    if (child == 0) {
      spin_forever();
    }
    printf("spinner %d\n", (int)child);
    parent_done(wait_child(child));
    return 0;
  }
  if (strcmp(mode, "vfork") == 0) {
    pid_t child = vfork();
    if (child == 0) {
      if (argc > 2) {
        execl(argv[2], argv[2], (char*)NULL);
      }
      _exit(5);
    }
    parent_done(wait_child(child));
    return 0;
  }
  if (strcmp(mode, "threads") == 0) {
    pthread_t t;
    pthread_create(&t, NULL, forking_thread, NULL);
    void* code = NULL;
    pthread_join(t, &code);
    parent_done((int)(long)code);
    return 0;
  }
  return 2;
}
