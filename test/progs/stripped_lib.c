/* A shared library as distributions ship them: stripped, so only its exported functions keep
 * their names (.dynsym). test/unit/triage/test_stripped_names.cpp names code in its static
 * function (found in the unstripped build of the same file) without its symbol. */
static int hidden_step(int x);

int stripped_entry(int x) { return hidden_step(x) + 1; }

static __attribute__((noinline)) int hidden_step(int x) {
  volatile int acc = x;
  for (int i = 0; i < 8; ++i) {
    acc = acc * 3 + i;
  }
  return acc;
}
