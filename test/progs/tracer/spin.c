/* A busy loop that never ends on its own. */
volatile unsigned long spins;

int main(void) {
  for (;;) {
    ++spins;
  }
}
