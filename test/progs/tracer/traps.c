/* traps.c - the program's own breakpoint instructions: an int3 (CC) at after_int3 - 1, then an
   `int $3` (CD 03) at after_int_3 - 2; a SIGTRAP handler counts them; exits 0 when it ran twice. */
#include <signal.h>

extern char after_int3[], after_int_3[];

static volatile sig_atomic_t traps;

static void on_trap(int sig) {
  (void)sig;
  traps++;
}

int main(void) {
  signal(SIGTRAP, on_trap);
  __asm__ volatile("int3\n.globl after_int3\nafter_int3:\n"
                   ".byte 0xcd, 0x03\n.globl after_int_3\nafter_int_3:\n" ::: "memory");
  return traps == 2 ? 0 : 1;
}
