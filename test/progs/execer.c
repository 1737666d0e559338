/* execer.c - runs a little, then execs the program named by argv[1] (test/progs/simple in the
   tests): GDB must learn of the new program to stop in it. */
#include <stdio.h>
#include <unistd.h>

__attribute__((noinline)) void before_exec(void) {
  puts("about to exec");
  fflush(stdout);
}

int main(int argc, char** argv) {
  if (argc < 2) {
    return 2;
  }
  before_exec();
  execv(argv[1], argv + 1);
  perror("execv");
  return 1;
}
