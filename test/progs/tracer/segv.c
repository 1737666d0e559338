/* Writes through a bad pointer: SIGSEGV with si_addr 0x10. */
int main(void) {
  volatile int* p = (volatile int*)0x10;
  *p = 1;
  return 0;
}
