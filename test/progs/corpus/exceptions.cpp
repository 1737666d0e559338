// C++ exceptions for the differential corpus: thrown through frames, caught, rethrown.
#include <stdexcept>

volatile long sink;

extern "C" __attribute__((noinline)) void diff_begin() { __asm__ volatile("" ::: "memory"); }
extern "C" __attribute__((noinline)) void diff_end() { __asm__ volatile("" ::: "memory"); }

__attribute__((noinline)) static void thrower(int depth) {
  if (depth == 0) {
    throw std::runtime_error("deep");
  }
  thrower(depth - 1);
  sink = sink + 1;
}

int main() {
  try {  // the first throw sets up the unwinder: outside the traced part
    thrower(0);
  } catch (const std::exception&) {
  }
  diff_begin();
  for (int i = 0; i < 2; ++i) {
    try {
      try {
        thrower(3);
      } catch (const std::runtime_error&) {
        sink = sink + 1;
        throw;
      }
    } catch (const std::exception& e) {
      sink = sink + e.what()[0];
    }
  }
  diff_end();
  return 0;
}
