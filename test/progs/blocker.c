/* blocker.c - thread 2 blocks in read() on a pipe nobody writes; the main thread waits for it.
   A breakpoint GDB puts at thread 2's pc (right after the syscall) must not hang the server:
   stepping over it restarts the read, which never returns. */
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

static int fds[2];

static void* reader(void* arg) {
  (void)arg;
  char c;
  ssize_t n = read(fds[0], &c, 1);
  return (void*)n;
}

int main(void) {
  if (pipe(fds) != 0) {
    return 1;
  }
  pthread_t t;
  pthread_create(&t, NULL, reader, NULL);
  printf("ready\n");
  fflush(stdout);
  pthread_join(t, NULL);
  return 0;
}
