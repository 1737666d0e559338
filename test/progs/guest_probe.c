/* What a program can see of a guest in it (issue 55): its link map and the loads it counted,
 * its heap, its /proc/self/maps, and its signal handler and mask. It prints the same natively and
 * recorded. main blocks SIGSEGV under a handler of its own (as code inside a SIGSEGV handler
 * does), then stops at probe_point, where the tests start recording, and prints what it sees, then calls probe_done.
 * With "wait" it first waits for `go` (set by GDB after an attach). */
#define _GNU_SOURCE
#include <link.h>
#include <sys/mman.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

volatile int go = 0;

static void on_segv(int sig) { (void)sig; }

struct seen {
  int objects, guests;
  unsigned long long adds, subs;
};

static int each_object(struct dl_phdr_info* info, size_t size, void* data) {
  struct seen* s = data;
  (void)size;
  s->objects++;
  s->adds = info->dlpi_adds;
  s->subs = info->dlpi_subs;
  if (strstr(info->dlpi_name, "hindsight") != NULL || strstr(info->dlpi_name, "Zydis") != NULL) {
    s->guests++;
  }
  return 0;
}

static int maps_naming_guest(void) {
  char line[512];
  int n = 0;
  FILE* f = fopen("/proc/self/maps", "r");
  if (f == NULL) {
    return -1;
  }
  while (fgets(line, sizeof line, f) != NULL) {
    n += strstr(line, "hindsight-recorder") != NULL || strstr(line, "Zydis") != NULL;
  }
  fclose(f);
  return n;
}

/* A `syscall` instruction's effect on the registers, as the program sees it: rcx the address
 * after it, r11 the flags it ran with, the flags unchanged. */
static void inline_syscall(long number) {
  unsigned long rax = (unsigned long)number, before, after, flags_after, rcx, r11;
  register unsigned long r10 __asm__("r10") = 0x22; /* MAP_PRIVATE | MAP_ANONYMOUS */
  register unsigned long r8 __asm__("r8") = (unsigned long)-1;
  register unsigned long r9 __asm__("r9") = 0;
  __asm__ volatile(
      "leaq -128(%%rsp), %%rsp\n\t"
      "stc\n\t"
      "pushfq\n\t"
      "popq %[before]\n\t"
      "leaq 1f(%%rip), %[after]\n\t"
      "stc\n\t"
      "syscall\n"
      "1:\n\t"
      "movq %%rcx, %[rcx]\n\t"
      "movq %%r11, %[r11]\n\t"
      "pushfq\n\t"
      "popq %[flags_after]\n\t"
      "leaq 128(%%rsp), %%rsp\n\t"
      : "+a"(rax), [before] "=&r"(before), [after] "=&r"(after), [rcx] "=&r"(rcx), [r11] "=&r"(r11),
        [flags_after] "=&r"(flags_after), "+r"(r10), "+r"(r8), "+r"(r9)
      : "D"(0), "S"(4096), "d"(3)
      : "rcx", "r11", "memory", "cc");
  if (number == 9 && (long)rax > 0) {
    munmap((void*)rax, 4096);
  }
  printf("syscall %ld: rcx %s, r11 %s, flags %s\n", number, rcx == after ? "as natively" : "changed",
         r11 == before ? "as natively" : "changed", flags_after == before ? "as natively" : "changed");
}

void probe_point(void) { __asm__ volatile("" ::: "memory"); }
void probe_done(void) { __asm__ volatile("" ::: "memory"); }

int main(int argc, char** argv) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_segv;
  sigaction(SIGSEGV, &sa, NULL);
  sigset_t segv;
  sigemptyset(&segv);
  sigaddset(&segv, SIGSEGV);
  sigprocmask(SIG_BLOCK, &segv, NULL);
  if (argc > 1 && strcmp(argv[1], "wait") == 0) {
    printf("waiting\n");
    fflush(stdout);
    while (!go) {
      usleep(1000);
    }
  }
  const size_t heap_before = mallinfo2().uordblks;
  probe_point();
  struct seen s = {0, 0, 0, 0};
  dl_iterate_phdr(each_object, &s);
  const size_t heap_after = mallinfo2().uordblks;
  struct sigaction now;
  sigaction(SIGSEGV, NULL, &now);
  sigset_t mask;
  sigprocmask(SIG_BLOCK, NULL, &mask);
  printf("link map: %d objects, %d of a guest, %llu loads, %llu unloads\n", s.objects, s.guests, s.adds, s.subs);
  printf("heap grew by %zu bytes at the probe\n", heap_after - heap_before);
  printf("maps naming a guest: %d\n", maps_naming_guest());
  printf("SIGSEGV handler: %s, blocked: %s\n", now.sa_handler == on_segv ? "ours" : "not ours",
         sigismember(&mask, SIGSEGV) ? "yes" : "no");
  inline_syscall(39); /* getpid: run in place in the cache */
  inline_syscall(9);  /* mmap: through the recorder's maps gate */
  fflush(stdout);
  probe_done();
  return 0;
}
