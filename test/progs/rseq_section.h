/* An rseq critical section in inline asm, as librseq writes one: the section runs from local
 * label 1 to label 2 (its commit the last instruction before 2), its abort handler is label 4
 * (the signature glibc registers right before it), its descriptor (struct rseq_cs) label 3 in
 * section __rseq_cs. `area` names an asm operand that holds glibc's __rseq_offset. */
#ifndef HS_TEST_RSEQ_SECTION_H
#define HS_TEST_RSEQ_SECTION_H

/* The descriptor, then the thread's rseq_cs word pointed at it (rax clobbered). */
#define HS_RSEQ_START(area)                 \
  ".pushsection __rseq_cs, \"aw\"\n"        \
  ".balign 32\n"                            \
  "3: .long 0, 0\n"                         \
  "   .quad 1f, 2f - 1f, 4f\n"              \
  ".popsection\n"                           \
  "  leaq 3b(%%rip), %%rax\n"               \
  "  movq %%rax, %%fs:8(%[" area "])\n"     \
  "1:\n"

/* Before label 4: RSEQ_SIG as glibc registers it on x86-64 (with ud1's first bytes, so that it
 * decodes as one instruction). */
#define HS_RSEQ_SIGNATURE            \
  "  .byte 0x0f, 0xb9, 0x3d\n"       \
  "  .long 0x53053053\n"

#define HS_RSEQ_SIG_VALUE 0x53053053u

#endif
