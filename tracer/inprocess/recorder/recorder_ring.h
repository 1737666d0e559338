/* SPDX-License-Identifier: MIT */
/* The in-process recorder's per-thread ring (prototype): the same contract as
 * tracer/btrace/dbt_ring.h without its file. One thread writes its ring (the code cache does,
 * with plain stores); sample n lives at n % HS_RECORDER_RING_CAPACITY and `head` counts the
 * samples ever written. The capacity is fixed: the translated code takes the index from the
 * head's low 16 bits (movzx), which needs no flags. C, so a reader in any language includes it. */
#ifndef HINDSIGHT_RECORDER_RING_H
#define HINDSIGHT_RECORDER_RING_H

#include <stdint.h>

#define HS_RECORDER_RING_CAPACITY 65536u /* samples; 2^16, see above */

/* One taken branch: the branch instruction's address and where it went. */
struct hs_recorder_sample {
  uint64_t from;
  uint64_t to;
};

struct hs_recorder_ring {
  uint64_t head;                      /* samples ever written */
  struct hs_recorder_sample* samples; /* HS_RECORDER_RING_CAPACITY of them */
};

#endif
