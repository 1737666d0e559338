/* signal_loop.c - always has a SIGALRM on the way: its handler raises the next one (blocked
   inside the handler, so pending until it returns), so a debugger that attaches finds one
   pending or being delivered. Nothing else runs meanwhile: main goes on only when the handler
   stops raising, after argv[1] seconds (default 30) or at a SIGUSR1 (then "signals ok", status
   0), or when a signal was lost ("a signal was lost", status 3). Prints its pid first. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

static volatile time_t end_time;
static volatile sig_atomic_t finished;

static void on_usr1(int sig)
{
  (void)sig;
  end_time = 0;  /* the next SIGALRM is the last */
}

static void on_alarm(int sig)
{
  if (time(NULL) >= end_time) {
    finished = 1;
    return;
  }
  raise(sig);
}

int main(int argc, char **argv)
{
  end_time = time(NULL) + (argc > 1 ? atol(argv[1]) : 30);
#ifdef PR_SET_PTRACER
  prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
#endif
  struct sigaction act;
  memset(&act, 0, sizeof act);
  act.sa_handler = on_alarm;
  act.sa_flags = SA_RESTART;
  sigaction(SIGALRM, &act, NULL);
  act.sa_handler = on_usr1;
  sigaction(SIGUSR1, &act, NULL);
  printf("pid=%d\n", (int)getpid());
  fflush(stdout);
  raise(SIGALRM);
  if (!finished) {
    printf("a signal was lost\n");
    return 3;
  }
  printf("signals ok\n");
  return 0;
}
