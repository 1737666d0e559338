// C++ for the differential corpus: exceptions thrown through frames, caught and rethrown, and
// thread-local objects with a constructor and a destructor, first used inside the traced part by
// main and by a thread made there (its TLS set up, its first exception's globals).
#include <unistd.h>

#include <stdexcept>
#include <thread>

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

struct PerThread {
  long n = 7;
  PerThread() { sink = sink + 1; }
  ~PerThread() { sink = sink + n; }
};
thread_local PerThread per_thread;

__attribute__((noinline)) static void throw_and_catch(int rounds) {
  for (int i = 0; i < rounds; ++i) {
    try {
      try {
        thrower(3);
      } catch (const std::runtime_error&) {
        per_thread.n += 1;
        throw;
      }
    } catch (const std::exception& e) {
      sink = sink + e.what()[0] + per_thread.n;
    }
  }
}

// The worker is still there at diff_end (so that its history is compared too): it says it is done
// through one pipe and waits on the other; main waits in a blocking read (the same branches every
// run).
int done_pipe[2], go_pipe[2];

// Where the differential stops comparing the worker: what it does after is cut short by wherever
// diff_end's stop finds it.
extern "C" __attribute__((noinline)) void worker_sync() { __asm__ volatile("" ::: "memory"); }

static void worker_main() {
  throw_and_catch(2);
  worker_sync();
  char c = 1;
  (void)!write(done_pipe[1], &c, 1);
  (void)!read(go_pipe[0], &c, 1);
}

int main() {
  if (pipe(done_pipe) != 0 || pipe(go_pipe) != 0) {
    return 1;
  }
  try {  // the first throw sets up the unwinder: outside the traced part
    thrower(0);
  } catch (const std::exception&) {
  }
  // read and write bound now (the program is linked -z lazy): whichever thread called one first
  // would go through ld.so's resolver, and the worker, quick enough, could be first.
  char none = 0;
  (void)!read(-1, &none, 0);
  (void)!write(-1, &none, 0);
  diff_begin();
  throw_and_catch(2);
  std::thread worker(worker_main);
  char c = 0;
  (void)!read(done_pipe[0], &c, 1);
  diff_end();
  (void)!write(go_pipe[1], &c, 1);
  worker.join();
  return 0;
}
