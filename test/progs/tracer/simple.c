/* Calls target_fn three times, then exits with argv[1] (7 without arguments).
   With a second argument, exits 42 if it arrived intact as "a b'c $HOME". */
#include <stdlib.h>
#include <string.h>

int counter;

__attribute__((noinline)) int target_fn(int x) {
  counter += x;
  return counter * 2;
}

int main(int argc, char** argv) {
  int sum = 0;
  for (int i = 0; i < 3; ++i) {
    sum += target_fn(i + 1);
  }
  if (argc > 2) {
    return strcmp(argv[2], "a b'c $HOME") == 0 ? 42 : 1;
  }
  return argc > 1 ? atoi(argv[1]) : (sum > 0 ? 7 : 0);
}
