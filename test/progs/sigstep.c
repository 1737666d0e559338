/* sigstep.c - a signal that arrives in the middle of a GDB `next`: poke() raises SIGUSR1,
   whose handler counts; main then prints the count and exits with it. */
#include <signal.h>
#include <stdio.h>

volatile int handled;

static void on_usr1(int sig) {
  (void)sig;
  handled++;
}

__attribute__((noinline)) void poke(void) {
  raise(SIGUSR1);
}

int main(void) {
  signal(SIGUSR1, on_usr1);
  poke();
  printf("handled=%d\n", handled);
  return handled;
}
