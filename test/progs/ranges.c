/* ranges.c - lines for range stepping (vCont;r): GDB `next`s from line to line and the server
   steps inside each line's address range. Each line below is one range of a kind:
   a call, a loop within the line, a branch out of the range, and a busy line that SIGALRM
   (a 1 ms interval timer, handled) interrupts many times. Exit status 0 when every line did
   its work: total 8, counted 1 + the loop's turns, 5 or more ticks. */
#include <signal.h>
#include <stdio.h>
#include <sys/time.h>

static volatile long ticks;
static volatile long counted;
static volatile long skipped;

static void on_alarm(int sig)
{
  (void)sig;
  ticks++;
}

__attribute__((noinline)) static long twice(long v)
{
  return v * 2;
}

int main(void)
{
  long total = 0;
  signal(SIGALRM, on_alarm);
  total += twice(3); /* range: a call */
  for (long i = 0; i < 4; i++) total += i % 2; /* range: a loop in one line */
  if (total > 1000) skipped++; else counted++; /* range: a branch out of it */
  struct itimerval every_ms = {{0, 1000}, {0, 1000}};
  setitimer(ITIMER_REAL, &every_ms, NULL);
  while (ticks < 5) counted++; /* range: interrupted by signals */
  struct itimerval off = {{0, 0}, {0, 0}};
  setitimer(ITIMER_REAL, &off, NULL);
  printf("total=%ld ticks>=5:%d skipped=%ld\n", total, ticks >= 5, skipped);
  return total == 8 && skipped == 0 && ticks >= 5 ? 0 : 1;
}
