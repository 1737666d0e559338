/* simple.c - single-threaded program for the basic GDB sessions.
   main -> sum_squares -> square; locals to print and change, a global counter,
   square() callable from GDB, and an exit code (7) that tells whether the sum
   was disturbed by the debugger (1). */
#include <stdio.h>

int global_counter = 0;

int square(int x)
{
  int result = x * x;
  return result;
}

static int sum_squares(int n)
{
  int total = 0;
  for (int i = 1; i <= n; i++) {
    total += square(i);
    global_counter++;
  }
  return total;
}

int main(void)
{
  int limit = 4;
  int sum = sum_squares(limit);
  printf("sum=%d counter=%d\n", sum, global_counter);
  fflush(stdout);
  return sum == 30 ? 7 : 1;
}
