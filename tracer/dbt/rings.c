/* SPDX-License-Identifier: GPL-2.0-or-later */
/* hsdbt's files the server reads: a ring per thread (tracer/btrace/dbt_ring.h) with its
 * clock readings, and the process's signal dispositions; each a shared file mapping.
 *
 * Copyright (C) 2026 the Hindsight authors. This program is free software; you can
 * redistribute it and/or modify it under the terms of the GNU General Public License as
 * published by the Free Software Foundation; either version 2 of the License, or (at your
 * option) any later version. See tracer/dbt/LICENSE. */

#include "tracer/dbt/hsdbt.h"

ThreadRing* hs_rings;
ULong hs_capacity;

struct hs_dbt_ring_header* hs_current;
/* A ring to write into while no thread has one (a failed mapping): never read. */
static struct {
  struct hs_dbt_ring_header header;
  struct hs_dbt_sample samples[1];
} hs_scratch;

/* Where the translated code writes for thread ring r: its ring, or the scratch one. */
struct hs_dbt_ring_header* hs_ring_or_scratch(const ThreadRing* r) {
  return r->header != NULL ? r->header : &hs_scratch.header;
}

struct hs_dbt_sample* hs_samples_of(struct hs_dbt_ring_header* h) {
  return (struct hs_dbt_sample*)((UChar*)h + HS_DBT_RING_HEADER_SIZE);
}

ULong hs_monotonic_ns(void) {
  struct vki_timespec ts;
  VG_(clock_gettime)(&ts, VKI_CLOCK_MONOTONIC);
  return (ULong)ts.tv_sec * 1000000000ull + (ULong)ts.tv_nsec;
}

static struct hs_dbt_time_mark* marks_of(struct hs_dbt_ring_header* h) {
  return (struct hs_dbt_time_mark*)((UChar*)hs_samples_of(h) + h->capacity * sizeof(struct hs_dbt_sample));
}

/* A clock reading `now` at the ring's head (dbt_ring.h: time marks). */
void hs_mark_time_at(struct hs_dbt_ring_header* h, ULong now) {
  h->latest_position = h->head;
  h->latest_ns = now;
  struct hs_dbt_time_mark* marks = marks_of(h);
  const ULong mask = h->marks_capacity - 1;
  const ULong spacing = h->capacity / h->marks_capacity > 0 ? h->capacity / h->marks_capacity : 1;
  if (h->marks_head == 0 || h->head - marks[(h->marks_head - 1) & mask].position >= spacing) {
    marks[h->marks_head & mask].position = h->head;
    marks[h->marks_head & mask].t_ns = now;
    h->marks_head++;
  }
}

/* Branches between two readings at least: a clock read is a system call here, and a program
 * that makes system calls a few branches apart would pay one per call. */
#define HS_MARK_EVERY 256u

/* A clock reading as the thread leaves the CPU, outside the translated code (so recording a
 * branch costs no more), when it ran enough branches since the last one. */
void hs_mark_time(struct hs_dbt_ring_header* h) {
  if (h != NULL && (h->latest_ns == 0 || h->head - h->latest_position >= HS_MARK_EVERY)) {
    hs_mark_time_at(h, hs_monotonic_ns());
  }
}

void hs_push(struct hs_dbt_ring_header* h, Addr from, Addr to) {
  struct hs_dbt_sample* s = &hs_samples_of(h)[h->head & (h->capacity - 1)];
  s->from = from;
  s->to = to;
  h->head++;
}

void hs_push_gap(struct hs_dbt_ring_header* h, Addr found_at) {
  hs_push(h, 0, found_at);
  h->gaps++;
}

/* DIR/hsdbt.PID.NAME, created zero-filled with `length` bytes and mapped shared; NULL (and a
 * message) when that fails. */
const HChar* hs_ring_dir(void) { return hs_clo_ring_dir != NULL ? hs_clo_ring_dir : VG_(tmpdir)(); }

/* The files this process made (by their names after DIR/hsdbt.PID.), dropped when it ends
 * under --follow-tree. */
static HChar** made_files;
static Int made_count;

void hs_remember_file(const HChar* name) {
  made_files = VG_(realloc)("hsdbt.made", made_files, (made_count + 1) * sizeof *made_files);
  made_files[made_count++] = VG_(strdup)("hsdbt.made", name);
}

void hs_forget_made_files(void) { made_count = 0; }

void hs_drop_made_files(void) {
  HChar path[VKI_PATH_MAX];
  for (Int i = 0; i < made_count; ++i) {
    VG_(snprintf)(path, sizeof path, "%s/%s%d.%s", hs_ring_dir(), HS_DBT_RING_PREFIX, VG_(getpid)(), made_files[i]);
    VG_(unlink)(path);
  }
}

static void* open_shared_file(const HChar* name, SizeT length) {
  const Int pid = VG_(getpid)();
  HChar path[VKI_PATH_MAX];
  VG_(snprintf)(path, sizeof path, "%s/%s%d.%s", hs_ring_dir(), HS_DBT_RING_PREFIX, pid, name);
  /* A new file, never the one of the same name before an exec: a reader may have that mapped. */
  VG_(unlink)(path);
  SysRes fd = VG_(open)(path, VKI_O_CREAT | VKI_O_TRUNC | VKI_O_RDWR, 0600);
  if (sr_isError(fd)) {
    VG_(umsg)("hsdbt: cannot create %s\n", path);
    return NULL;
  }
  /* The file's pages are made as they are written: a sparse file, a ring costs what it holds. */
  const UChar zero = 0;
  const Bool sized = VG_(lseek)(sr_Res(fd), length - 1, VKI_SEEK_SET) == (Off64T)(length - 1) &&
                     VG_(write)(sr_Res(fd), &zero, 1) == 1;
  SysRes map = VG_(am_shared_mmap_file_float_valgrind)(length, VKI_PROT_READ | VKI_PROT_WRITE, sr_Res(fd), 0);
  VG_(close)(sr_Res(fd));
  if (!sized || sr_isError(map)) {
    VG_(umsg)("hsdbt: cannot map %s (%lu bytes)\n", path, (unsigned long)length);
    return NULL;
  }
  hs_remember_file(name);
  return (void*)sr_Res(map);
}

struct hs_dbt_ring_header* hs_open_ring(void) {
  const Int pid = VG_(getpid)();
  const Int tid = VG_(gettid)();
  HChar name[32];
  VG_(snprintf)(name, sizeof name, "%d", tid);
  struct hs_dbt_ring_header* h =
      open_shared_file(name, HS_DBT_RING_HEADER_SIZE + hs_capacity * sizeof(struct hs_dbt_sample) +
                                 HS_DBT_MARKS_CAPACITY * sizeof(struct hs_dbt_time_mark));
  if (h == NULL) {
    VG_(umsg)("hsdbt: no history for thread %d\n", tid);
    return NULL;
  }
  h->version = HS_DBT_RING_VERSION;
  h->header_size = HS_DBT_RING_HEADER_SIZE;
  h->pid = pid;
  h->tid = tid;
  h->capacity = hs_capacity;
  h->head = 0;
  h->gaps = 0;
  h->state = HS_DBT_RING_RUNNING;
  h->born_ns = 0;
  h->exited_ns = 0;
  h->marks_capacity = HS_DBT_MARKS_CAPACITY;
  h->marks_head = 0;
  h->latest_position = 0;
  h->latest_ns = 0;
  h->magic = HS_DBT_RING_MAGIC; /* last: a reader takes the ring once this is there */
  return h;
}

/* ---- signal dispositions ------------------------------------------------------------------ */

static struct hs_dbt_signals* signals; /* NULL: the file could not be made */

void hs_open_signals(void) {
  signals = open_shared_file(HS_DBT_SIGNALS_SUFFIX + 1, sizeof *signals);
  if (signals != NULL) {
    signals->pid = VG_(getpid)();
    signals->magic = HS_DBT_SIGNALS_MAGIC;
  }
}

/* A successful rt_sigaction(sig, act, old) with an act: the program's new disposition. */
void hs_note_sigaction(UWord* args, SysRes res) {
  const UWord sig = args[0];
  if (signals == NULL || sr_isError(res) || args[1] == 0 || sig >= HS_DBT_SIGNALS_COUNT) {
    return;
  }
  const Addr handler = *(const Addr*)args[1]; /* sa_handler leads struct sigaction */
  signals->action[sig] = handler == (Addr)VKI_SIG_DFL   ? HS_DBT_SIGNAL_DEFAULT
                         : handler == (Addr)VKI_SIG_IGN ? HS_DBT_SIGNAL_IGNORE
                                                        : HS_DBT_SIGNAL_HANDLER;
}

void hs_signals_after_fork(void) {
  struct hs_dbt_signals* parent = signals;
  hs_open_signals(); /* the child's own, starting from what it inherited */
  if (signals != NULL && parent != NULL) {
    VG_(memcpy)(signals->action, parent->action, sizeof signals->action);
  }
}

void hs_rings_init(void) {
  hs_capacity = 1;
  while (hs_capacity * 2 * sizeof(struct hs_dbt_sample) <= hs_clo_ring_size) {
    hs_capacity *= 2;
  }
  hs_rings = VG_(calloc)("hsdbt.rings", VG_N_THREADS, sizeof(ThreadRing));
  /* The main thread's ring exists before its first instruction (a debugger may start
   * recording there); the others' when they first run. */
  hs_rings[1].header = hs_open_ring();
  hs_open_signals();
  hs_current = &hs_scratch.header;
  hs_scratch.header.capacity = 1;
}

struct hs_dbt_ring_header* hs_scratch_ring(void) { return &hs_scratch.header; }
