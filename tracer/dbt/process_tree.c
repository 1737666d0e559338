/* SPDX-License-Identifier: GPL-2.0-or-later */
/* hsdbt's part in following a process tree (--follow-tree): who waits for a debugger
 * where, the tree's events for the server (DIR/hsdbt.events), each process's memory map, and
 * the setuid programs it runs natively.
 *
 * Copyright (C) 2026 the Hindsight authors. This program is free software; you can
 * redistribute it and/or modify it under the terms of the GNU General Public License as
 * published by the Free Software Foundation; either version 2 of the License, or (at your
 * option) any later version. See tracer/dbt/LICENSE. */

#include "tracer/dbt/hsdbt.h"

static Bool first_process;      /* Valgrind started this one first, and it has not exec'd */
static Bool arm_at_first_run;   /* wait for a debugger at a fatal signal once client code runs */
static Bool exiting;            /* it called exit_group ... */
static Int exit_status;         /* ... with this */

static void write_event(const struct hs_dbt_process_event* e) {
  HChar path[VKI_PATH_MAX];
  VG_(snprintf)(path, sizeof path, "%s/%s", hs_ring_dir(), HS_DBT_EVENTS_NAME);
  SysRes fd = VG_(open)(path, VKI_O_CREAT | VKI_O_WRONLY | VKI_O_APPEND, 0600);
  if (!sr_isError(fd)) {
    VG_(write)(sr_Res(fd), e, sizeof *e);
    VG_(close)(sr_Res(fd));
  }
}

/* The exec of path about to run natively (its arguments are not known here). */
static void append_native(const HChar* path) {
  struct hs_dbt_process_event e;
  VG_(memset)(&e, 0, sizeof e);
  e.kind = HS_DBT_PROCESS_NATIVE;
  e.pid = VG_(getpid)();
  e.parent = VG_(getppid)();
  e.t_ns = hs_monotonic_ns();
  VG_(strncpy)(e.command, path, sizeof e.command - 1);
  write_event(&e);
}

static void append_event(UInt kind, Int pid, Int parent, Int status, Bool with_command) {
  struct hs_dbt_process_event e;
  VG_(memset)(&e, 0, sizeof e);
  e.kind = kind;
  e.pid = pid;
  e.parent = parent;
  e.status = status;
  e.t_ns = hs_monotonic_ns();
  if (with_command) {
    /* The program, then its arguments, NUL after each, cut to fit (the last NUL stays). */
    UInt used = 0;
    const Word count = VG_(args_for_client) != NULL ? VG_(sizeXA)(VG_(args_for_client)) : 0;
    for (Word i = -1; i < count && used + 1 < sizeof e.command; ++i) {
      const HChar* word = i < 0 ? VG_(args_the_exename) : *(HChar**)VG_(indexXA)(VG_(args_for_client), i);
      for (const HChar* c = word; c != NULL && *c != 0 && used + 1 < sizeof e.command; ++c) {
        e.command[used++] = *c;
      }
      e.command[used++] = 0;
    }
  }
  write_event(&e);
}

/* Whether this process is the first Valgrind started: the first to make DIR/hsdbt.first
 * (which says its pid), or the one named there before it exec'd (then no more). */
static Bool claim_first(void) {
  HChar path[VKI_PATH_MAX];
  VG_(snprintf)(path, sizeof path, "%s/%s", hs_ring_dir(), HS_DBT_FIRST_NAME);
  const Int pid = VG_(getpid)();
  SysRes fd = VG_(open)(path, VKI_O_CREAT | VKI_O_EXCL | VKI_O_WRONLY, 0600);
  if (!sr_isError(fd)) {
    VG_(write)(sr_Res(fd), &pid, sizeof pid);
    VG_(close)(sr_Res(fd));
    return True;
  }
  return False;
}

/* A process other than the first: no wait at its start (nobody is there to come), a wait at a
 * fatal signal once it runs (Valgrind's gdbserver waits there when vgdb-error is 0), so the
 * debugger that follows the tree can read it where it dies. */
static void wait_only_at_fatal_signal(void) {
  VG_(clo_vgdb_error) = 0x7fffffff;
  arm_at_first_run = True;
}

/* /proc/self/maps into DIR/hsdbt.PID.maps (replaced whole): what names the code of a process
 * that ends before anything can be read from it (SIGKILL). */
static Bool maps_saved; /* (its file is among those dropped at the end) */

void hs_tree_save_maps(void) {
  static HChar buf[1 << 16];
  SysRes in = VG_(open)("/proc/self/maps", VKI_O_RDONLY, 0);
  if (sr_isError(in)) {
    return;
  }
  Int used = 0, n = 0;
  while (used < (Int)sizeof buf && (n = VG_(read)(sr_Res(in), buf + used, sizeof buf - used)) > 0) {
    used += n;
  }
  VG_(close)(sr_Res(in));
  HChar path[VKI_PATH_MAX], temp[VKI_PATH_MAX];
  VG_(snprintf)(path, sizeof path, "%s/%s%d.maps", hs_ring_dir(), HS_DBT_RING_PREFIX, VG_(getpid)());
  VG_(snprintf)(temp, sizeof temp, "%s.new", path);
  SysRes out = VG_(open)(temp, VKI_O_CREAT | VKI_O_TRUNC | VKI_O_WRONLY, 0600);
  if (sr_isError(out)) {
    return;
  }
  VG_(write)(sr_Res(out), buf, used);
  VG_(close)(sr_Res(out));
  VG_(rename)(temp, path); /* a reader sees the old list or the new one, whole */
  if (!maps_saved) {
    maps_saved = True;
    hs_remember_file("maps");
  }
}

void hs_tree_start(void) {
  first_process = claim_first();
  append_event(first_process ? HS_DBT_PROCESS_START : HS_DBT_PROCESS_EXEC, VG_(getpid)(), VG_(getppid)(), 0, True);
  if (!first_process) {
    wait_only_at_fatal_signal();
  }
}

void hs_tree_fork_child(void) {
  first_process = False;
  maps_saved = False;
  hs_tree_save_maps();
  exiting = False;
  append_event(HS_DBT_PROCESS_FORK, VG_(getpid)(), VG_(getppid)(), 0, False);
  wait_only_at_fatal_signal();
}

/* Valgrind cannot give a setuid or setgid program its privileges, and tracing children it
 * refuses to exec one (EACCES): the program would not do what it does natively. Such an exec
 * runs the program natively, unrecorded (a --trace-children-skip pattern for that path alone,
 * while the exec is tried). */
static HChar native_path[VKI_PATH_MAX];
static const HChar* skip_patterns;  /* the user's, put back if the exec fails */
static Bool skipping;

static Bool needs_privileges(const HChar* path) {
  struct vg_stat st;
  return !sr_isError(VG_(stat)(path, &st)) && (st.mode & (VKI_S_ISUID | VKI_S_ISGID)) != 0;
}

void hs_tree_before_exec(const HChar* path) {
  if (path == NULL || skipping || VG_(clo_trace_children_skip) != NULL || VG_(strlen)(path) >= sizeof native_path ||
      VG_(strchr)(path, ',') != NULL || !needs_privileges(path)) {
    return;
  }
  VG_(strcpy)(native_path, path);
  skip_patterns = VG_(clo_trace_children_skip);
  VG_(clo_trace_children_skip) = native_path;
  skipping = True;
  append_native(path);
}

void hs_tree_exec_failed(void) {
  if (skipping) {
    VG_(clo_trace_children_skip) = skip_patterns;
    skipping = False;
  }
}

/* A child the process reaped (wait4, waitid) that SIGKILL killed: it could not say so itself. */
void hs_tree_reaped(Int child, Int status) {
  if (child > 0 && (status & 0x7f) == VKI_SIGKILL) {
    append_event(HS_DBT_PROCESS_REAPED, child, VG_(getpid)(), status, False);
  }
}

void hs_tree_end(void) {
  append_event(exiting ? HS_DBT_PROCESS_EXIT : HS_DBT_PROCESS_KILLED, VG_(getpid)(), 0, exit_status, False);
  if (!first_process && hs_clo_drop_rings) {
    hs_drop_made_files(); /* read already, where it died; nobody asks for them after a clean end */
  }
}

void hs_tree_exit_group(Int status) {
  exiting = True;
  exit_status = status;
}

void hs_tree_client_code_runs(void) {
  if (arm_at_first_run) {
    arm_at_first_run = False; /* past Valgrind's start-up action, which reads it too */
    VG_(clo_vgdb_error) = 0;
  }
  if (hs_clo_follow_tree && !maps_saved) {
    hs_tree_save_maps(); /* the program and its dynamic linker, mapped by Valgrind */
  }
}
