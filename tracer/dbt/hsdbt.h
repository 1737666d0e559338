/* SPDX-License-Identifier: GPL-2.0-or-later */
/* hsdbt's parts (tracer/dbt/hsdbt.c says what the tool does): what one file of it gives the
 * others. Every name here starts with hs_: the tool is linked with Valgrind's core.
 *
 * Copyright (C) 2026 the Hindsight authors. This program is free software; you can
 * redistribute it and/or modify it under the terms of the GNU General Public License as
 * published by the Free Software Foundation; either version 2 of the License, or (at your
 * option) any later version. See tracer/dbt/LICENSE. */
#ifndef HINDSIGHT_HSDBT_H
#define HINDSIGHT_HSDBT_H

#include "pub_tool_basics.h"
#include "pub_tool_clientstate.h"
#include "pub_tool_libcassert.h"
#include "pub_tool_libcbase.h"
#include "pub_tool_libcfile.h"
#include "pub_tool_libcprint.h"
#include "pub_tool_libcproc.h"
#include "pub_tool_machine.h"
#include "pub_tool_options.h"
#include "pub_tool_threadstate.h"
#include "pub_tool_tooliface.h"
#include "pub_tool_vki.h"
#include "pub_tool_vkiscnums.h"
#include "pub_tool_xarray.h"
#include "pub_tool_mallocfree.h"

#include "tracer/btrace/dbt_ring.h"

/* Exported by the core (pub_core_aspacemgr.h) but not by the tool headers: a MAP_SHARED
 * mapping of a file in Valgrind's own part of the address space (the core uses it for the
 * memory it shares with vgdb). */
extern SysRes VG_(am_shared_mmap_file_float_valgrind)(SizeT length, UInt prot, Int fd, Off64T offset);
/* Valgrind's --trace-children-skip patterns (pub_core_options.h), read at each exec. */
extern const HChar* VG_(clo_trace_children_skip);
/* The core's system call (pub_core_syscall.h). */
extern SysRes VG_(do_syscall)(UWord sysno, RegWord, RegWord, RegWord, RegWord, RegWord, RegWord, RegWord, RegWord);

/* ---- options (hsdbt.c) ------------------------------------------------------------------ */

extern const HChar* hs_clo_ring_dir; /* default: VG_(tmpdir)() */
extern ULong hs_clo_ring_size;       /* bytes of samples per thread */
extern Bool hs_clo_follow_tree;
extern Bool hs_clo_drop_rings;       /* with --follow-tree: a process drops its rings when it ends */

/* ---- rings and the other shared files (rings.c) ----------------------------------------- */

typedef struct {
  struct hs_dbt_ring_header* header; /* NULL: none yet */
  Bool started;                      /* it has run client code */
  Addr stopped_at;                   /* where the thread stood when it last left the CPU */
  Bool was_in_syscall;               /* it left the CPU for a system call ... */
  Addr syscall_at;                   /* ... this `syscall` instruction */
  Bool delivering;                   /* a signal frame was pushed: the next run is its handler */
  Addr delivered_from;               /* the branch the delivery is recorded from (0: a gap) */
} ThreadRing;

extern ThreadRing* hs_rings; /* by Valgrind's ThreadId, VG_N_THREADS of them */
extern ULong hs_capacity;    /* samples per ring, a power of two */
/* The running thread's ring. Only one thread runs client code at a time: start_client_code
 * points this at its ring and the translated code writes through it. */
extern struct hs_dbt_ring_header* hs_current;

/* After the command line: the rings' size, the main thread's ring, the signal table. */
void hs_rings_init(void);
/* A ring to write into while no thread has one (a failed mapping): never read. */
struct hs_dbt_ring_header* hs_scratch_ring(void);
/* Where the translated code writes for thread ring r: its ring, or the scratch one. */
struct hs_dbt_ring_header* hs_ring_or_scratch(const ThreadRing* r);
struct hs_dbt_sample* hs_samples_of(struct hs_dbt_ring_header* h);
ULong hs_monotonic_ns(void);
/* A clock reading `now` at the ring's head (dbt_ring.h: time marks). */
void hs_mark_time_at(struct hs_dbt_ring_header* h, ULong now);
/* A clock reading as the thread leaves the CPU, when it ran enough branches since the last. */
void hs_mark_time(struct hs_dbt_ring_header* h);
void hs_push(struct hs_dbt_ring_header* h, Addr from, Addr to);
void hs_push_gap(struct hs_dbt_ring_header* h, Addr found_at);
/* The calling thread's new ring, DIR/hsdbt.PID.TID; NULL (and a message) when that fails. */
struct hs_dbt_ring_header* hs_open_ring(void);
const HChar* hs_ring_dir(void);
/* The files this process made, dropped when it ends (--follow-tree); a fork child forgets the
 * parent's. */
void hs_remember_file(const HChar* name);
void hs_drop_made_files(void);
void hs_forget_made_files(void);
/* The signal table (DIR/hsdbt.PID.signals): made, updated at each rt_sigaction, and a fork
 * child's own copy of its parent's. */
void hs_open_signals(void);
void hs_note_sigaction(UWord* args, SysRes res);
void hs_signals_after_fork(void);

/* ---- the process tree, --follow-tree (process_tree.c) ----------------------------------- */

void hs_tree_start(void);
void hs_tree_fork_child(void);
/* Client code runs (each time): the wait at a fatal signal armed, the first memory map saved. */
void hs_tree_client_code_runs(void);
/* The process called exit_group(status): its own end. */
void hs_tree_exit_group(Int status);
void hs_tree_before_exec(const HChar* path);
void hs_tree_exec_failed(void);
void hs_tree_reaped(Int child, Int status);
void hs_tree_save_maps(void);
void hs_tree_end(void);

/* ---- threads off the translated code (thread_events.c) ---------------------------------- */

void hs_start_client_code(ThreadId tid, ULong blocks_done);
void hs_stop_client_code(ThreadId tid, ULong blocks_done);
void hs_pre_syscall(ThreadId tid, UInt sysno, UWord* args, UInt nargs);
void hs_post_syscall(ThreadId tid, UInt sysno, UWord* args, UInt nargs, SysRes res);
void hs_pre_deliver_signal(ThreadId tid, Int sig, Bool alt_stack);
void hs_thread_exit(ThreadId tid);
void hs_fork_child(ThreadId tid);

/* ---- instrumentation (instrument.c) ----------------------------------------------------- */

IRSB* hs_instrument(VgCallbackClosure* closure, IRSB* in, const VexGuestLayout* layout,
                    const VexGuestExtents* extents, const VexArchInfo* arch, IRType gWordTy, IRType hWordTy);

#endif
