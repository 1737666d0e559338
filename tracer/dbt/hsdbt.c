/* SPDX-License-Identifier: GPL-2.0-or-later */
/* hsdbt: Hindsight's branch recorder, a Valgrind tool. Every taken branch of every thread goes
 * into that thread's flight-recorder ring (tracer/btrace/dbt_ring.h), a shared file mapping the
 * server reads while the program runs. Branches are recorded by inline IR (a few loads and
 * stores per branch, no helper call); control transfers the translated code does not show
 * (signal delivery, sigreturn) are recorded when the thread next runs.
 *
 *   valgrind --tool=hsdbt [--ring-dir=DIR] [--ring-size=BYTES] [--follow-tree=yes] PROG ARGS
 *
 * --follow-tree=yes (with Valgrind's --trace-children=yes --vgdb=yes --vgdb-error=0): the
 * whole process tree, as dbt_ring.h says: the first process waits for a debugger at its start,
 * every other one at a fatal signal; what happens to processes goes to DIR/hsdbt.events.
 *
 * Copyright (C) 2026 the Hindsight authors. This program is free software; you can
 * redistribute it and/or modify it under the terms of the GNU General Public License as
 * published by the Free Software Foundation; either version 2 of the License, or (at your
 * option) any later version. See tracer/dbt/LICENSE. */

#include "tracer/dbt/hsdbt.h"

/* ---- options ---------------------------------------------------------------------------- */

const HChar* hs_clo_ring_dir = NULL;      /* default: VG_(tmpdir)() */
ULong hs_clo_ring_size = 8ull << 20;      /* bytes of samples per thread */
Bool hs_clo_follow_tree = False;
Bool hs_clo_drop_rings = True; /* with --follow-tree: a process drops its rings when it ends */

static Bool hs_process_cmd_line_option(const HChar* arg) {
  if VG_STR_CLO (arg, "--ring-dir", hs_clo_ring_dir) {
  } else if VG_BINT_CLO (arg, "--ring-size", hs_clo_ring_size, 4096, VG_WORDSIZE == 8 ? 1ull << 34 : 1ull << 28) {
  } else if VG_BOOL_CLO (arg, "--follow-tree", hs_clo_follow_tree) {
  } else if VG_BOOL_CLO (arg, "--drop-rings", hs_clo_drop_rings) {
  } else {
    return False;
  }
  return True;
}

static void hs_print_usage(void) {
  VG_(printf)("    --ring-dir=DIR            where the rings go: DIR/hsdbt.PID.TID [$TMPDIR]\n"
              "    --ring-size=BYTES         samples per thread, in bytes (16 each) [8M]\n"
              "    --follow-tree=yes|no      every descendant: events, a wait at fatal signals [no]\n"
              "    --drop-rings=yes|no       with --follow-tree, a process drops its rings at its end [yes]\n");
}

static void hs_print_debug_usage(void) {}

/* ---- set-up ------------------------------------------------------------------------------- */

/* The process is named after the program, as it is natively (pgrep -x, ps -C, top): Valgrind's
 * launcher named it after the tool ("hsdbt-amd64-lin"). Threads the program creates inherit
 * the name; its own prctl(PR_SET_NAME) still renames them. */
static void name_process(void) {
  const HChar* exe = VG_(args_the_exename);
  if (exe == NULL) {
    return;
  }
  const HChar* slash = VG_(strrchr)(exe, '/');
  HChar name[16]; /* the kernel's TASK_COMM_LEN */
  VG_(strncpy)(name, slash != NULL ? slash + 1 : exe, sizeof name - 1);
  name[sizeof name - 1] = 0;
  (void)VG_(do_syscall)(__NR_prctl, VKI_PR_SET_NAME, (RegWord)name, 0, 0, 0, 0, 0, 0);
}

static void hs_post_clo_init(void) {
  name_process();
  hs_rings_init();
  /* One guest branch, one recorded branch: no superblocks chased across jumps, no loops
   * unrolled into straight code (set here, after the command line, so nothing overrides it). */
  VG_(clo_vex_control).guest_chase = False;
  VG_(clo_vex_control).iropt_unroll_thresh = 0;
  if (hs_clo_follow_tree) {
    hs_tree_start();
  }
}

static void hs_fini(Int exitcode) {
  (void)exitcode;
  for (ThreadId t = 0; t < VG_N_THREADS; ++t) {
    if (hs_rings[t].header != NULL) {
      hs_rings[t].header->exited_ns = hs_monotonic_ns();
      hs_rings[t].header->state = HS_DBT_RING_EXITED;
    }
  }
  if (hs_clo_follow_tree) {
    hs_tree_end();
  }
}

static void hs_pre_clo_init(void) {
  VG_(details_name)("hsdbt");
  VG_(details_version)(NULL);
  VG_(details_description)("Hindsight's branch recorder");
  VG_(details_copyright_author)("Copyright (C) 2026 the Hindsight authors; GPL-2.0-or-later");
  VG_(details_bug_reports_to)("the Hindsight project");
  VG_(details_avg_translation_sizeB)(300);

  VG_(basic_tool_funcs)(hs_post_clo_init, hs_instrument, hs_fini);
  VG_(needs_command_line_options)(hs_process_cmd_line_option, hs_print_usage, hs_print_debug_usage);
  VG_(track_start_client_code)(hs_start_client_code);
  VG_(track_stop_client_code)(hs_stop_client_code);
  VG_(track_pre_deliver_signal)(hs_pre_deliver_signal);
  VG_(track_pre_thread_ll_exit)(hs_thread_exit);
  VG_(needs_syscall_wrapper)(hs_pre_syscall, hs_post_syscall);
  VG_(atfork)(NULL, NULL, hs_fork_child);
}

VG_DETERMINE_INTERFACE_VERSION(hs_pre_clo_init)
