/* sleeper.c - runs until killed so that a debugger can attach and detach.
   Prints its pid, then calls tick() every 10 ms; `ticks` counts the calls.
   Optional argv[1]: give up after that many seconds (a safety net). */
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

volatile unsigned long ticks;

void tick(void)
{
  ticks++;
}

int main(int argc, char **argv)
{
  long limit_ms = argc > 1 ? atol(argv[1]) * 1000 : -1;
#ifdef PR_SET_PTRACER
  /* Let a sibling process (the server under test) attach under Yama. */
  prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
#endif
  printf("pid=%d\n", (int)getpid());
  fflush(stdout);
  struct timespec delay = {0, 10 * 1000 * 1000};
  for (long elapsed = 0; limit_ms < 0 || elapsed < limit_ms; elapsed += 10) {
    tick();
    nanosleep(&delay, NULL);
  }
  return 0;
}
