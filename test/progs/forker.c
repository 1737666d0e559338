/* forker.c - forks a child that runs the same function the parent runs: a breakpoint GDB puts
   on work() must not kill the child (our int3s must not survive in it). The exit code is the
   child's: 0 when it ran work() to the end and exited normally. */
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

volatile int result;

__attribute__((noinline)) int work(int x) {
  result = x * 2;
  return result;
}

int main(void) {
  pid_t child = fork();
  if (child == 0) {
    _exit(work(21) == 42 ? 0 : 3);
  }
  int status = 0;
  waitpid(child, &status, 0);
  printf("child %s %d\n", WIFEXITED(status) ? "exited" : "killed by signal",
         WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
  fflush(stdout);
  work(1);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 100 + WTERMSIG(status);
}
