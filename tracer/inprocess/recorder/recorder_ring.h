/* SPDX-License-Identifier: MIT */
/* The in-process recorder's per-thread ring: the contract of tracer/btrace/dbt_ring.h without
 * its file, but for where a sample lies. One thread writes its ring (the code cache does, with
 * plain stores); `head` counts the samples ever written, and sample n lives at (n + 1) % capacity
 * (the code counts it first, then stores it where the new head points: one register serves for
 * both). Every ring of a process has one capacity, a power of two the server asks for (GDB's
 * buffer size) between the two below: the translated code keeps the head's low bits with
 * movzx, or BMI2's rorx, which change no flag; without BMI2 every ring has the smallest. C, so a
 * reader in any language includes it. */
#ifndef HINDSIGHT_RECORDER_RING_H
#define HINDSIGHT_RECORDER_RING_H

#include <stdint.h>

#define HS_RECORDER_RING_MIN_CAPACITY (1ull << 16) /* samples */
#define HS_RECORDER_RING_MAX_CAPACITY (1ull << 22) /* samples: 64 MiB of them */
/* Where sample n of a ring of `capacity` lies. */
#define HS_RECORDER_RING_SLOT(n, capacity) (((n) + 1) & ((capacity) - 1))

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
