/* SPDX-License-Identifier: MIT */
/* The dbt recorder's flight-recorder rings, one file per thread: the recorder (tracer/dbt, a
 * Valgrind tool, GPL) writes them while the program runs, the server (MIT) maps and reads
 * them. This layout is the only thing the two share. C, so both sides include it.
 *
 *   DIR/hsdbt.PID.TID      header (128 bytes), then `capacity` samples of {from, to}, then
 *                          `marks_capacity` time marks of {position, t_ns}
 *   DIR/hsdbt.PID.signals  what the program does with each signal now (its sigactions)
 *   DIR/hsdbt.events       with --follow-tree: every process's start, fork, exec and end, appended
 *   DIR/hsdbt.first        with --follow-tree: the pid of the process Valgrind started first
 *   DIR/hsdbt.PID.maps     with --follow-tree: /proc/PID/maps as the process's code last changed
 *
 * Sample n lives at n % capacity. The recorder writes a sample, then head = n + 1 (one thread
 * writes a ring; x86 keeps stores in order). A reader copies the samples it wants and reads
 * head again: samples older than head - capacity were overwritten meanwhile. All fields are
 * little-endian and laid out the same by the 64-bit recorder and the 32-bit one (for i386
 * programs, which writes its addresses zero-extended).
 *
 * Time marks: a clock reading when the thread starts, exits, and leaves the CPU (a system
 * call, a time slice) after 256 branches or more since the last, taken with the ring's head
 * at `position`. Mark n lives at n % marks_capacity;
 * one is kept only capacity / marks_capacity samples or more after the one before, so the
 * marks span the whole ring; the newest reading is always in latest_position / latest_ns. */
#ifndef HINDSIGHT_DBT_RING_H
#define HINDSIGHT_DBT_RING_H

#include <stdint.h>

#define HS_DBT_RING_MAGIC 0x474e495254424448ull /* "HDBTRING" */
#define HS_DBT_RING_VERSION 3u
#define HS_DBT_RING_HEADER_SIZE 128u
#define HS_DBT_RING_PREFIX "hsdbt." /* file name: hsdbt.PID.TID */

enum hs_dbt_ring_state {
  HS_DBT_RING_RUNNING = 0, /* the thread lives */
  HS_DBT_RING_EXITED = 1,  /* the thread exited: the ring holds its last branches */
};

struct hs_dbt_ring_header {
  uint64_t magic;
  uint32_t version;
  uint32_t header_size; /* the samples start here */
  uint64_t pid;         /* kernel ids of the process and the thread */
  uint64_t tid;
  uint64_t capacity; /* samples; a power of two */
  uint64_t head;     /* samples ever written */
  uint64_t gaps;     /* control transfers the recorder could not describe: a gap sample each */
  uint64_t state;    /* enum hs_dbt_ring_state */
  uint64_t born_ns;   /* CLOCK_MONOTONIC when the thread first ran (0: before it ran) */
  uint64_t exited_ns; /* CLOCK_MONOTONIC when it exited (0: it lives) */
  uint64_t marks_capacity;  /* time marks after the samples; a power of two */
  uint64_t marks_head;      /* marks ever kept */
  uint64_t latest_position; /* the newest clock reading: head then ... */
  uint64_t latest_ns;       /* ... and CLOCK_MONOTONIC then (0: none yet) */
  uint64_t reserved[2];
};

/* A clock reading taken when the ring's head stood at `position`. */
struct hs_dbt_time_mark {
  uint64_t position;
  uint64_t t_ns;
};
#define HS_DBT_MARKS_CAPACITY 4096u

/* The process's signal dispositions as the program set them (rt_sigaction), which only the
 * recorder sees: Valgrind keeps them to itself. One byte per signal number. */
#define HS_DBT_SIGNALS_MAGIC 0x534c414e47495348ull /* "HSIGNALS" */
#define HS_DBT_SIGNALS_SUFFIX ".signals"
#define HS_DBT_SIGNALS_COUNT 72u
enum hs_dbt_signal_action {
  HS_DBT_SIGNAL_DEFAULT = 0,
  HS_DBT_SIGNAL_IGNORE = 1,
  HS_DBT_SIGNAL_HANDLER = 2,
};
struct hs_dbt_signals {
  uint64_t magic;
  uint64_t pid;
  uint8_t action[HS_DBT_SIGNALS_COUNT]; /* enum hs_dbt_signal_action, by signal number */
};

/* With --follow-tree the recorder follows every descendant (Valgrind's --trace-children) and
 * appends what happens to processes to DIR/hsdbt.events, one record each (O_APPEND: records of
 * different processes never mix). Only the first process waits for a debugger at its start;
 * every other (and the first after an exec) waits for one at a fatal signal instead, and a
 * process drops its rings when it ends (the first one's before an exec excepted). */
#define HS_DBT_EVENTS_NAME "hsdbt.events"
#define HS_DBT_FIRST_NAME "hsdbt.first"
enum hs_dbt_process_event_kind {
  HS_DBT_PROCESS_START = 1,  /* the first process began (command: its program and arguments) */
  HS_DBT_PROCESS_FORK = 2,   /* pid was forked by parent */
  HS_DBT_PROCESS_EXEC = 3,   /* pid exec'd command (its image and arguments) */
  HS_DBT_PROCESS_EXIT = 4,   /* pid exited with status */
  HS_DBT_PROCESS_KILLED = 5, /* pid ended without exiting: a signal killed it */
  HS_DBT_PROCESS_NATIVE = 6, /* pid exec'd command natively, unrecorded (setuid or setgid: Valgrind
                              * cannot run it with its privileges); nothing more is known of it */
  HS_DBT_PROCESS_REAPED = 7, /* parent reaped pid, which SIGKILL killed (status: the wait status):
                              * it could say nothing itself; its rings and maps are still there */
};
#define HS_DBT_COMMAND_BYTES 232u
struct hs_dbt_process_event {
  uint32_t kind;   /* enum hs_dbt_process_event_kind */
  uint32_t pid;
  uint32_t parent; /* the parent's pid (fork, start, exec) */
  int32_t status;  /* exit: the status the process passed to exit */
  uint64_t t_ns;   /* CLOCK_MONOTONIC */
  char command[HS_DBT_COMMAND_BYTES]; /* start, exec: the program, then its arguments, each
                                       * ended by a NUL (as /proc/PID/cmdline), cut to fit */
};

/* A taken branch: from the branch instruction to its target. from == 0: a gap, the thread was
 * next seen at `to` (the same convention as the other collectors' samples). */
struct hs_dbt_sample {
  uint64_t from;
  uint64_t to;
};

/* The same sizes in both languages and both word sizes (i386 aligns 64-bit fields to 4). */
#ifdef __cplusplus
#define HS_DBT_STATIC_ASSERT static_assert
#else
#define HS_DBT_STATIC_ASSERT _Static_assert
#endif
HS_DBT_STATIC_ASSERT(sizeof(struct hs_dbt_ring_header) == HS_DBT_RING_HEADER_SIZE, "ring header layout");
HS_DBT_STATIC_ASSERT(__builtin_offsetof(struct hs_dbt_ring_header, head) == 40, "ring header layout");
HS_DBT_STATIC_ASSERT(sizeof(struct hs_dbt_sample) == 16, "sample layout");
HS_DBT_STATIC_ASSERT(sizeof(struct hs_dbt_time_mark) == 16, "time mark layout");
HS_DBT_STATIC_ASSERT(sizeof(struct hs_dbt_signals) == 88, "signals layout");
HS_DBT_STATIC_ASSERT(__builtin_offsetof(struct hs_dbt_process_event, t_ns) == 16, "process event layout");
HS_DBT_STATIC_ASSERT(sizeof(struct hs_dbt_process_event) == 256, "process event layout");

#endif /* HINDSIGHT_DBT_RING_H */
