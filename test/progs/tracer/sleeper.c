/* Runs until killed, calling tick() every 10 ms. */
#include <time.h>

volatile unsigned long ticks;

__attribute__((noinline)) void tick(void) { ++ticks; }

int main(void) {
  struct timespec ts = {0, 10 * 1000 * 1000};
  for (;;) {
    tick();
    nanosleep(&ts, 0);
  }
}
