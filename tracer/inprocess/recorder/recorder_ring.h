/* SPDX-License-Identifier: MIT */
/* The in-process recorder's per-thread ring: the same contract as tracer/btrace/dbt_ring.h
 * without its file. One thread writes its ring (the code cache does, with plain stores); sample
 * n lives at n % capacity and `head` counts the samples ever written. The capacity is a power of
 * two the server asks for (GDB's buffer size), between the two below: the translated code keeps
 * the head's low bits with shlx and shrx (BMI2), which change no flag; without BMI2 it takes
 * the low 16 bits (movzx) and every ring has the smallest capacity. C, so a reader in any
 * language includes it. */
#ifndef HINDSIGHT_RECORDER_RING_H
#define HINDSIGHT_RECORDER_RING_H

#include <stdint.h>

#define HS_RECORDER_RING_MIN_CAPACITY (1ull << 16) /* samples */
#define HS_RECORDER_RING_MAX_CAPACITY (1ull << 22) /* samples: 64 MiB of them */

/* One taken branch: the branch instruction's address and where it went. */
struct hs_recorder_sample {
  uint64_t from;
  uint64_t to;
};

struct hs_recorder_ring {
  uint64_t head;                      /* samples ever written */
  struct hs_recorder_sample* samples; /* capacity of them */
  uint64_t capacity;                  /* a power of two */
};

#endif
