/* int3_roundtrip.c - the ceiling of any ptrace collector that stops at branches: how many
 * times per second a tracer can let a child run into an int3 and on again (PTRACE_CONT ->
 * int3 -> waitpid -> PTRACE_GETREGS -> PTRACE_SETREGS), as SoftEmulate does at each branch.
 *   int3_roundtrip [N]   prints "ROUNDTRIP N SECONDS PER_SECOND" */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char** argv) {
  long n = argc > 1 ? atol(argv[1]) : 200000;
  pid_t child = fork();
  if (child == 0) {
    ptrace(PTRACE_TRACEME, 0, NULL, NULL);
    raise(SIGSTOP);
    for (;;) {
      __asm__ volatile("int3");
    }
  }
  int st = 0;
  waitpid(child, &st, 0);
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (long i = 0; i < n; ++i) {
    ptrace(PTRACE_CONT, child, NULL, NULL);
    waitpid(child, &st, 0);
    struct user_regs_struct regs;
    ptrace(PTRACE_GETREGS, child, NULL, &regs);
    ptrace(PTRACE_SETREGS, child, NULL, &regs);  /* the branch performed: rip written back */
  }
  clock_gettime(CLOCK_MONOTONIC, &t1);
  kill(child, SIGKILL);
  waitpid(child, &st, 0);
  double s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
  printf("ROUNDTRIP %ld %.3f %.0f\n", n, s, n / s);
  return 0;
}
