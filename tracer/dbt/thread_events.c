/* SPDX-License-Identifier: GPL-2.0-or-later */
/* hsdbt's view of each thread off the translated code: it starts and stops running,
 * makes system calls, takes signals, ends, forks; and the control transfers the translated
 * code does not show (signal delivery, sigreturn), recorded when the thread next runs.
 *
 * Copyright (C) 2026 the Hindsight authors. This program is free software; you can
 * redistribute it and/or modify it under the terms of the GNU General Public License as
 * published by the Free Software Foundation; either version 2 of the License, or (at your
 * option) any later version. See tracer/dbt/LICENSE. */

#include "tracer/dbt/hsdbt.h"

/* The thread moved while it was off the CPU (a signal handler entered, a sigreturn): record
 * the move as a branch from the last instruction that ran, or a gap where that is unknown. */
static void catch_up(ThreadId tid, ThreadRing* r) {
  const Addr now = VG_(get_IP)(tid);
  if (r->header == NULL || now == r->stopped_at) {
    return;
  }
  if (r->was_in_syscall && now == r->syscall_at) {
    r->stopped_at = now; /* a system call a signal interrupted, set to run again: no move */
    return;
  }
  if (r->delivering) {
    if (r->delivered_from != 0) {
      hs_push(r->header, r->delivered_from, now);
    } else {
      hs_push_gap(r->header, now);
    }
  } else if (r->was_in_syscall) {
    hs_push(r->header, r->syscall_at, now); /* rt_sigreturn: from its syscall instruction */
  } else {
    hs_push_gap(r->header, now);
  }
  r->stopped_at = now;
  r->delivering = False;
  r->was_in_syscall = False;
}

void hs_start_client_code(ThreadId tid, ULong blocks_done) {
  (void)blocks_done;
  hs_tree_client_code_runs();
  ThreadRing* r = &hs_rings[tid];
  if (r->header == NULL) {
    r->header = hs_open_ring();
  }
  if (!r->started) {
    r->started = True;
    r->stopped_at = VG_(get_IP)(tid);
    if (r->header != NULL) {
      r->header->born_ns = hs_monotonic_ns();
      hs_mark_time_at(r->header, r->header->born_ns);
    }
  }
  catch_up(tid, r);
  r->was_in_syscall = False;
  hs_current = hs_ring_or_scratch(r);
}

void hs_stop_client_code(ThreadId tid, ULong blocks_done) {
  (void)blocks_done;
  ThreadRing* r = &hs_rings[tid];
  r->stopped_at = VG_(get_IP)(tid);
  hs_mark_time(r->header);
  hs_current = hs_scratch_ring();
}

/* The thread left the CPU for a system call (the guest pc is past the 2-byte `syscall`, or
 * `int $0x80`: Valgrind keeps i386 programs off sysenter). */
void hs_pre_syscall(ThreadId tid, UInt sysno, UWord* args, UInt nargs) {
  (void)nargs;
  if (sysno == __NR_exit_group) { /* exit() ends with it: the process's own end */
    hs_tree_exit_group((Int)(args[0] & 0xff));
  } else if (sysno == __NR_execve && hs_clo_follow_tree) {
    hs_tree_before_exec((const HChar*)args[0]);
  }
  ThreadRing* r = &hs_rings[tid];
  r->was_in_syscall = True;
  r->syscall_at = VG_(get_IP)(tid) - 2;
}

/* The system call that maps files with `prot` as its third argument (i386's old mmap takes
 * its arguments in memory; glibc calls mmap2 there). */
static Bool is_mmap(UInt sysno) {
#if defined(VGP_x86_linux)
  return sysno == __NR_mmap2;
#else
  return sysno == __NR_mmap;
#endif
}

void hs_post_syscall(ThreadId tid, UInt sysno, UWord* args, UInt nargs, SysRes res) {
  (void)tid;
  (void)nargs;
  if (sysno == __NR_rt_sigaction) {
    hs_note_sigaction(args, res);
  } else if (sysno == __NR_execve && hs_clo_follow_tree) {
    hs_tree_exec_failed(); /* (a successful exec never returns here) */
  } else if (is_mmap(sysno) && hs_clo_follow_tree && !sr_isError(res) && (args[2] & VKI_PROT_EXEC) != 0) {
    hs_tree_save_maps(); /* a library's code */
  } else if (sysno == __NR_wait4 && hs_clo_follow_tree && !sr_isError(res) && args[1] != 0) {
    hs_tree_reaped((Int)sr_Res(res), *(Int*)args[1]);
  } else if (sysno == __NR_waitid && hs_clo_follow_tree && !sr_isError(res) && args[2] != 0) {
    const vki_siginfo_t* info = (const vki_siginfo_t*)args[2];
    if (info->si_code == 2 /* CLD_KILLED */) {
      hs_tree_reaped(info->_sifields._sigchld._pid, info->_sifields._sigchld._status);
    }
  }
}

void hs_pre_deliver_signal(ThreadId tid, Int sig, Bool alt_stack) {
  (void)sig;
  (void)alt_stack;
  ThreadRing* r = &hs_rings[tid];
  if (r->header == NULL) {
    return;
  }
  catch_up(tid, r); /* a sigreturn right before: recorded first */
  /* The interrupted instruction at `at` has not run. The delivery is a branch from the last
   * one that ran when that led to `at` sequentially (a system call), from `at` itself when a
   * branch went there (as single-stepping records it), else unknown: a gap. */
  const Addr at = VG_(get_IP)(tid);
  const struct hs_dbt_ring_header* h = r->header;
  const Bool branched_there = h->head > 0 && hs_samples_of(r->header)[(h->head - 1) & (h->capacity - 1)].to == at;
  if (branched_there) {
    r->delivered_from = at;
  } else if (r->was_in_syscall) {
    r->delivered_from = r->syscall_at;
  } else {
    r->delivered_from = 0;
  }
  r->delivering = True;
  r->stopped_at = at;
}

void hs_thread_exit(ThreadId tid) {
  ThreadRing* r = &hs_rings[tid];
  if (r->header != NULL) {
    r->header->exited_ns = hs_monotonic_ns();
    hs_mark_time_at(r->header, r->header->exited_ns);
    r->header->state = HS_DBT_RING_EXITED;
  }
  /* The mapping stays (a reused ThreadId gets a fresh one): the file outlives the thread. */
  VG_(memset)(r, 0, sizeof *r);
  hs_current = hs_scratch_ring();
}

/* A fork child: its thread gets a ring of its own; the parent's rings are not its to write. */
void hs_fork_child(ThreadId tid) {
  hs_forget_made_files(); /* the parent's files stay the parent's */
  for (ThreadId t = 0; t < VG_N_THREADS; ++t) {
    hs_rings[t].header = NULL;
  }
  hs_rings[tid].header = hs_open_ring();
  hs_rings[tid].started = True;
  if (hs_rings[tid].header != NULL) {
    hs_rings[tid].header->born_ns = hs_monotonic_ns();
    hs_mark_time_at(hs_rings[tid].header, hs_rings[tid].header->born_ns);
  }
  hs_current = hs_ring_or_scratch(&hs_rings[tid]);
  if (hs_clo_follow_tree) {
    hs_tree_fork_child();
  } else {
    /* No debugger follows the child: it must not wait for one at a fatal signal (Valgrind's
     * gdbserver would, with --vgdb-error=0), it dies as it would natively. */
    VG_(clo_vgdb_error) = 0x7fffffff;
  }
  hs_signals_after_fork();
}
