// Loaded, called and unloaded twice by `corpus dlopen`: its code comes and goes.
__attribute__((noinline)) static long step(long x) { return x % 3 == 0 ? x / 3 : x * 3 + 1; }

long plugin_work(long x) {
  long n = 0;
  while (x != 1 && n < 100) {
    x = step(x);
    ++n;
  }
  return n;
}
