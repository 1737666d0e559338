/* crash.c - dies of SIGSEGV by writing through a NULL pointer two calls below
   main. The written field is at offset 16, so the fault address is 0x10. */
#include <stddef.h>
#include <stdio.h>

struct record {
  long id;
  long flags;
  int value;
};

static void store(struct record *r, int v)
{
  r->value = v; /* faults: r is NULL */
}

static void update(struct record *r, int depth)
{
  store(depth > 0 ? NULL : r, depth);
}

int main(void)
{
  struct record rec = {1, 0, 0};
  printf("about to crash\n");
  fflush(stdout);
  update(&rec, 3);
  printf("not reached: %d\n", rec.value);
  return 0;
}
