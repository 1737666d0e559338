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

/* ---- options ---------------------------------------------------------------------------- */

static const HChar* clo_ring_dir = NULL;      /* default: VG_(tmpdir)() */
static ULong clo_ring_size = 8ull << 20;      /* bytes of samples per thread */
static Bool clo_follow_tree = False;
static Bool clo_drop_rings = True; /* with --follow-tree: a process drops its rings when it ends */

static Bool hs_process_cmd_line_option(const HChar* arg) {
  if VG_STR_CLO (arg, "--ring-dir", clo_ring_dir) {
  } else if VG_BINT_CLO (arg, "--ring-size", clo_ring_size, 4096, VG_WORDSIZE == 8 ? 1ull << 34 : 1ull << 28) {
  } else if VG_BOOL_CLO (arg, "--follow-tree", clo_follow_tree) {
  } else if VG_BOOL_CLO (arg, "--drop-rings", clo_drop_rings) {
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

/* ---- rings ------------------------------------------------------------------------------ */

typedef struct {
  struct hs_dbt_ring_header* header; /* NULL: none yet */
  Bool started;                      /* it has run client code */
  Addr stopped_at;                   /* where the thread stood when it last left the CPU */
  Bool was_in_syscall;               /* it left the CPU for a system call ... */
  Addr syscall_at;                   /* ... this `syscall` instruction */
  Bool delivering;                   /* a signal frame was pushed: the next run is its handler */
  Addr delivered_from;               /* the branch the delivery is recorded from (0: a gap) */
} ThreadRing;

static ThreadRing* rings; /* by Valgrind's ThreadId, VG_N_THREADS of them */
static ULong capacity; /* samples per ring, a power of two */

/* The running thread's ring. Only one thread runs client code at a time: start_client_code
 * points this at its ring and the translated code writes through it. */
static struct hs_dbt_ring_header* hs_current;
/* A ring to write into while no thread has one (a failed mapping): never read. */
static struct {
  struct hs_dbt_ring_header header;
  struct hs_dbt_sample samples[1];
} hs_scratch;

/* Where the translated code writes for thread ring r: its ring, or the scratch one. */
static struct hs_dbt_ring_header* ring_or_scratch(const ThreadRing* r) {
  return r->header != NULL ? r->header : &hs_scratch.header;
}

static struct hs_dbt_sample* samples_of(struct hs_dbt_ring_header* h) {
  return (struct hs_dbt_sample*)((UChar*)h + HS_DBT_RING_HEADER_SIZE);
}

static ULong monotonic_ns(void) {
  struct vki_timespec ts;
  VG_(clock_gettime)(&ts, VKI_CLOCK_MONOTONIC);
  return (ULong)ts.tv_sec * 1000000000ull + (ULong)ts.tv_nsec;
}

static struct hs_dbt_time_mark* marks_of(struct hs_dbt_ring_header* h) {
  return (struct hs_dbt_time_mark*)((UChar*)samples_of(h) + h->capacity * sizeof(struct hs_dbt_sample));
}

/* A clock reading `now` at the ring's head (dbt_ring.h: time marks). */
static void mark_time_at(struct hs_dbt_ring_header* h, ULong now) {
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
static void mark_time(struct hs_dbt_ring_header* h) {
  if (h != NULL && (h->latest_ns == 0 || h->head - h->latest_position >= HS_MARK_EVERY)) {
    mark_time_at(h, monotonic_ns());
  }
}

static void push(struct hs_dbt_ring_header* h, Addr from, Addr to) {
  struct hs_dbt_sample* s = &samples_of(h)[h->head & (h->capacity - 1)];
  s->from = from;
  s->to = to;
  h->head++;
}

static void push_gap(struct hs_dbt_ring_header* h, Addr found_at) {
  push(h, 0, found_at);
  h->gaps++;
}

/* DIR/hsdbt.PID.NAME, created zero-filled with `length` bytes and mapped shared; NULL (and a
 * message) when that fails. */
static const HChar* ring_dir(void) { return clo_ring_dir != NULL ? clo_ring_dir : VG_(tmpdir)(); }

/* The files this process made (by their names after DIR/hsdbt.PID.), dropped when it ends
 * under --follow-tree. */
static HChar** made_files;
static Int made_count;

static void remember_file(const HChar* name) {
  made_files = VG_(realloc)("hsdbt.made", made_files, (made_count + 1) * sizeof *made_files);
  made_files[made_count++] = VG_(strdup)("hsdbt.made", name);
}

static void drop_made_files(void) {
  HChar path[VKI_PATH_MAX];
  for (Int i = 0; i < made_count; ++i) {
    VG_(snprintf)(path, sizeof path, "%s/%s%d.%s", ring_dir(), HS_DBT_RING_PREFIX, VG_(getpid)(), made_files[i]);
    VG_(unlink)(path);
  }
}

static void* open_shared_file(const HChar* name, SizeT length) {
  const Int pid = VG_(getpid)();
  HChar path[VKI_PATH_MAX];
  VG_(snprintf)(path, sizeof path, "%s/%s%d.%s", ring_dir(), HS_DBT_RING_PREFIX, pid, name);
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
  remember_file(name);
  return (void*)sr_Res(map);
}

static struct hs_dbt_ring_header* open_ring(void) {
  const Int pid = VG_(getpid)();
  const Int tid = VG_(gettid)();
  HChar name[32];
  VG_(snprintf)(name, sizeof name, "%d", tid);
  struct hs_dbt_ring_header* h =
      open_shared_file(name, HS_DBT_RING_HEADER_SIZE + capacity * sizeof(struct hs_dbt_sample) +
                                 HS_DBT_MARKS_CAPACITY * sizeof(struct hs_dbt_time_mark));
  if (h == NULL) {
    VG_(umsg)("hsdbt: no history for thread %d\n", tid);
    return NULL;
  }
  h->version = HS_DBT_RING_VERSION;
  h->header_size = HS_DBT_RING_HEADER_SIZE;
  h->pid = pid;
  h->tid = tid;
  h->capacity = capacity;
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

/* ---- signal dispositions ------------------------------------------------------------------- */

static struct hs_dbt_signals* signals; /* NULL: the file could not be made */

static void open_signals(void) {
  signals = open_shared_file(HS_DBT_SIGNALS_SUFFIX + 1, sizeof *signals);
  if (signals != NULL) {
    signals->pid = VG_(getpid)();
    signals->magic = HS_DBT_SIGNALS_MAGIC;
  }
}

/* A successful rt_sigaction(sig, act, old) with an act: the program's new disposition. */
static void note_sigaction(UWord* args, SysRes res) {
  const UWord sig = args[0];
  if (signals == NULL || sr_isError(res) || args[1] == 0 || sig >= HS_DBT_SIGNALS_COUNT) {
    return;
  }
  const Addr handler = *(const Addr*)args[1]; /* sa_handler leads struct sigaction */
  signals->action[sig] = handler == (Addr)VKI_SIG_DFL   ? HS_DBT_SIGNAL_DEFAULT
                         : handler == (Addr)VKI_SIG_IGN ? HS_DBT_SIGNAL_IGNORE
                                                        : HS_DBT_SIGNAL_HANDLER;
}

/* ---- the process tree (--follow-tree) ------------------------------------------------------ */

static Bool first_process;      /* Valgrind started this one first, and it has not exec'd */
static Bool arm_at_first_run;   /* wait for a debugger at a fatal signal once client code runs */
static Bool exiting;            /* it called exit_group ... */
static Int exit_status;         /* ... with this */

static void write_event(const struct hs_dbt_process_event* e) {
  HChar path[VKI_PATH_MAX];
  VG_(snprintf)(path, sizeof path, "%s/%s", ring_dir(), HS_DBT_EVENTS_NAME);
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
  e.t_ns = monotonic_ns();
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
  e.t_ns = monotonic_ns();
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
  VG_(snprintf)(path, sizeof path, "%s/%s", ring_dir(), HS_DBT_FIRST_NAME);
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

static void tree_save_maps(void) {
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
  VG_(snprintf)(path, sizeof path, "%s/%s%d.maps", ring_dir(), HS_DBT_RING_PREFIX, VG_(getpid)());
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
    remember_file("maps");
  }
}

static void tree_start(void) {
  first_process = claim_first();
  append_event(first_process ? HS_DBT_PROCESS_START : HS_DBT_PROCESS_EXEC, VG_(getpid)(), VG_(getppid)(), 0, True);
  if (!first_process) {
    wait_only_at_fatal_signal();
  }
}

static void tree_fork_child(void) {
  first_process = False;
  maps_saved = False;
  tree_save_maps();
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

static void tree_before_exec(const HChar* path) {
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

static void tree_exec_failed(void) {
  if (skipping) {
    VG_(clo_trace_children_skip) = skip_patterns;
    skipping = False;
  }
}

/* A child the process reaped (wait4, waitid) that SIGKILL killed: it could not say so itself. */
static void tree_reaped(Int child, Int status) {
  if (child > 0 && (status & 0x7f) == VKI_SIGKILL) {
    append_event(HS_DBT_PROCESS_REAPED, child, VG_(getpid)(), status, False);
  }
}

static void tree_end(void) {
  append_event(exiting ? HS_DBT_PROCESS_EXIT : HS_DBT_PROCESS_KILLED, VG_(getpid)(), 0, exit_status, False);
  if (!first_process && clo_drop_rings) {
    drop_made_files(); /* read already, where it died; nobody asks for them after a clean end */
  }
}

/* ---- transfers the translated code does not show ----------------------------------------- */

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
      push(r->header, r->delivered_from, now);
    } else {
      push_gap(r->header, now);
    }
  } else if (r->was_in_syscall) {
    push(r->header, r->syscall_at, now); /* rt_sigreturn: from its syscall instruction */
  } else {
    push_gap(r->header, now);
  }
  r->stopped_at = now;
  r->delivering = False;
  r->was_in_syscall = False;
}

static void hs_start_client_code(ThreadId tid, ULong blocks_done) {
  (void)blocks_done;
  if (arm_at_first_run) {
    arm_at_first_run = False; /* past Valgrind's start-up action, which reads it too */
    VG_(clo_vgdb_error) = 0;
  }
  if (clo_follow_tree && !maps_saved) {
    tree_save_maps(); /* the program and its dynamic linker, mapped by Valgrind */
  }
  ThreadRing* r = &rings[tid];
  if (r->header == NULL) {
    r->header = open_ring();
  }
  if (!r->started) {
    r->started = True;
    r->stopped_at = VG_(get_IP)(tid);
    if (r->header != NULL) {
      r->header->born_ns = monotonic_ns();
      mark_time_at(r->header, r->header->born_ns);
    }
  }
  catch_up(tid, r);
  r->was_in_syscall = False;
  hs_current = ring_or_scratch(r);
}

static void hs_stop_client_code(ThreadId tid, ULong blocks_done) {
  (void)blocks_done;
  ThreadRing* r = &rings[tid];
  r->stopped_at = VG_(get_IP)(tid);
  mark_time(r->header);
  hs_current = &hs_scratch.header;
}

/* The thread left the CPU for a system call (the guest pc is past the 2-byte `syscall`, or
 * `int $0x80`: Valgrind keeps i386 programs off sysenter). */
static void hs_pre_syscall(ThreadId tid, UInt sysno, UWord* args, UInt nargs) {
  (void)nargs;
  if (sysno == __NR_exit_group) { /* exit() ends with it: the process's own end */
    exiting = True;
    exit_status = (Int)(args[0] & 0xff);
  } else if (sysno == __NR_execve && clo_follow_tree) {
    tree_before_exec((const HChar*)args[0]);
  }
  ThreadRing* r = &rings[tid];
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

static void hs_post_syscall(ThreadId tid, UInt sysno, UWord* args, UInt nargs, SysRes res) {
  (void)tid;
  (void)nargs;
  if (sysno == __NR_rt_sigaction) {
    note_sigaction(args, res);
  } else if (sysno == __NR_execve && clo_follow_tree) {
    tree_exec_failed(); /* (a successful exec never returns here) */
  } else if (is_mmap(sysno) && clo_follow_tree && !sr_isError(res) && (args[2] & VKI_PROT_EXEC) != 0) {
    tree_save_maps(); /* a library's code */
  } else if (sysno == __NR_wait4 && clo_follow_tree && !sr_isError(res) && args[1] != 0) {
    tree_reaped((Int)sr_Res(res), *(Int*)args[1]);
  } else if (sysno == __NR_waitid && clo_follow_tree && !sr_isError(res) && args[2] != 0) {
    const vki_siginfo_t* info = (const vki_siginfo_t*)args[2];
    if (info->si_code == 2 /* CLD_KILLED */) {
      tree_reaped(info->_sifields._sigchld._pid, info->_sifields._sigchld._status);
    }
  }
}

static void hs_pre_deliver_signal(ThreadId tid, Int sig, Bool alt_stack) {
  (void)sig;
  (void)alt_stack;
  ThreadRing* r = &rings[tid];
  if (r->header == NULL) {
    return;
  }
  catch_up(tid, r); /* a sigreturn right before: recorded first */
  /* The interrupted instruction at `at` has not run. The delivery is a branch from the last
   * one that ran when that led to `at` sequentially (a system call), from `at` itself when a
   * branch went there (as single-stepping records it), else unknown: a gap. */
  const Addr at = VG_(get_IP)(tid);
  const struct hs_dbt_ring_header* h = r->header;
  const Bool branched_there = h->head > 0 && samples_of(r->header)[(h->head - 1) & (h->capacity - 1)].to == at;
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

static void hs_thread_exit(ThreadId tid) {
  ThreadRing* r = &rings[tid];
  if (r->header != NULL) {
    r->header->exited_ns = monotonic_ns();
    mark_time_at(r->header, r->header->exited_ns);
    r->header->state = HS_DBT_RING_EXITED;
  }
  /* The mapping stays (a reused ThreadId gets a fresh one): the file outlives the thread. */
  VG_(memset)(r, 0, sizeof *r);
  hs_current = &hs_scratch.header;
}

/* A fork child: its thread gets a ring of its own; the parent's rings are not its to write. */
static void hs_fork_child(ThreadId tid) {
  made_count = 0; /* the parent's files stay the parent's */
  for (ThreadId t = 0; t < VG_N_THREADS; ++t) {
    rings[t].header = NULL;
  }
  rings[tid].header = open_ring();
  rings[tid].started = True;
  if (rings[tid].header != NULL) {
    rings[tid].header->born_ns = monotonic_ns();
    mark_time_at(rings[tid].header, rings[tid].header->born_ns);
  }
  hs_current = ring_or_scratch(&rings[tid]);
  if (clo_follow_tree) {
    tree_fork_child();
  } else {
    /* No debugger follows the child: it must not wait for one at a fatal signal (Valgrind's
     * gdbserver would, with --vgdb-error=0), it dies as it would natively. */
    VG_(clo_vgdb_error) = 0x7fffffff;
  }
  struct hs_dbt_signals* parent = signals;
  open_signals(); /* the child's own, starting from what it inherited */
  if (signals != NULL && parent != NULL) {
    VG_(memcpy)(signals->action, parent->action, sizeof signals->action);
  }
}

/* ---- instrumentation ---------------------------------------------------------------------- */

static IRExpr* tmp_of(IRSB* sb, IRType ty, IRExpr* e) {
  IRTemp t = newIRTemp(sb->tyenv, ty);
  addStmtToIRSB(sb, IRStmt_WrTmp(t, e));
  return IRExpr_RdTmp(t);
}

static IRExpr* u64(ULong v) { return IRExpr_Const(IRConst_U64(v)); }

/* Host words (the guest's too: a Valgrind tool runs programs of its own instruction set):
 * addresses, and the program counters VEX shows. The ring's fields are 64-bit on both. */
#if VG_WORDSIZE == 8
#define HS_WORD_TYPE Ity_I64
#define HS_WORD_OP(op) op##64
static IRExpr* word(HWord v) { return IRExpr_Const(IRConst_U64(v)); }
static IRExpr* widen_to_64(IRSB* sb, IRExpr* e) { (void)sb; return e; }
static IRExpr* narrow_to_word(IRSB* sb, IRExpr* e) { (void)sb; return e; }
static HWord constant_word(const IRConst* c) { return c->Ico.U64; }
#else
#define HS_WORD_TYPE Ity_I32
#define HS_WORD_OP(op) op##32
static IRExpr* word(HWord v) { return IRExpr_Const(IRConst_U32(v)); }
static IRExpr* widen_to_64(IRSB* sb, IRExpr* e) { return tmp_of(sb, Ity_I64, IRExpr_Unop(Iop_32Uto64, e)); }
static IRExpr* narrow_to_word(IRSB* sb, IRExpr* e) { return tmp_of(sb, Ity_I32, IRExpr_Unop(Iop_64to32, e)); }
static HWord constant_word(const IRConst* c) { return c->Ico.U32; }
#endif

/* Where a record the guard turns down goes: stores through a chosen address, not guarded
 * stores, which the x86 code generator does not have. Never read. */
static struct hs_dbt_sample hs_sink;

/* Appends to sb: if guard (NULL: always), sample {from, to} into the running thread's ring. */
static void add_record(IRSB* sb, Addr from, IRExpr* to, IRExpr* guard) {
  IRExpr* ring = tmp_of(sb, HS_WORD_TYPE, IRExpr_Load(Iend_LE, HS_WORD_TYPE, word((HWord)&hs_current)));
  IRExpr* head_at = tmp_of(sb, HS_WORD_TYPE, IRExpr_Binop(HS_WORD_OP(Iop_Add), ring, word(__builtin_offsetof(struct hs_dbt_ring_header, head))));
  IRExpr* head = tmp_of(sb, Ity_I64, IRExpr_Load(Iend_LE, Ity_I64, head_at));
  IRExpr* index = tmp_of(sb, HS_WORD_TYPE, IRExpr_Binop(HS_WORD_OP(Iop_And), narrow_to_word(sb, head), word(capacity - 1)));
  IRExpr* offset = tmp_of(sb, HS_WORD_TYPE, IRExpr_Binop(HS_WORD_OP(Iop_Shl), index, IRExpr_Const(IRConst_U8(4))));
  IRExpr* base = tmp_of(sb, HS_WORD_TYPE, IRExpr_Binop(HS_WORD_OP(Iop_Add), ring, word(HS_DBT_RING_HEADER_SIZE)));
  IRExpr* slot = tmp_of(sb, HS_WORD_TYPE, IRExpr_Binop(HS_WORD_OP(Iop_Add), base, offset));
  IRExpr* next_head;
  if (guard == NULL) {
    next_head = tmp_of(sb, Ity_I64, IRExpr_Binop(Iop_Add64, head, u64(1)));
  } else {
    slot = tmp_of(sb, HS_WORD_TYPE, IRExpr_ITE(guard, slot, word((HWord)&hs_sink)));
    IRExpr* one_if = tmp_of(sb, HS_WORD_TYPE, IRExpr_Unop(HS_WORD_OP(Iop_1Uto), guard));
    next_head = tmp_of(sb, Ity_I64, IRExpr_Binop(Iop_Add64, head, widen_to_64(sb, one_if)));
  }
  IRExpr* slot_to = tmp_of(sb, HS_WORD_TYPE, IRExpr_Binop(HS_WORD_OP(Iop_Add), slot, word(8)));
  addStmtToIRSB(sb, IRStmt_Store(Iend_LE, slot, u64(from)));
  addStmtToIRSB(sb, IRStmt_Store(Iend_LE, slot_to, widen_to_64(sb, to)));
  addStmtToIRSB(sb, IRStmt_Store(Iend_LE, head_at, next_head));
}

/* Appends the record of a transfer to a target known only at run time: a branch unless it
 * goes on to the next instruction (which single-stepping does not count as one either). */
static void add_record_unless_next(IRSB* sb, Addr from, IRExpr* to, Addr next_insn) {
  IRExpr* elsewhere = tmp_of(sb, Ity_I1, IRExpr_Binop(HS_WORD_OP(Iop_CmpNE), to, word(next_insn)));
  add_record(sb, from, to, elsewhere);
}

/* The instruction at addr repeats itself (rep/repne string instructions, a lock prefix's
 * retried compare-and-swap): VEX shows that as a jump back to it, which is no branch. */
static Bool repeats_itself(Addr addr, UInt len) {
  const UChar* p = (const UChar*)addr;
  for (UInt i = 0; i < len; ++i) {
    switch (p[i]) {
      case 0xf0: case 0xf2: case 0xf3:
        return True;
      case 0x26: case 0x2e: case 0x36: case 0x3e: case 0x64: case 0x65: case 0x66: case 0x67:
        break;
      default:
        if (VG_WORDSIZE == 4 || (p[i] & 0xf0) != 0x40) {
          return False; /* the opcode, past legacy and (64-bit code's) REX prefixes */
        }
    }
  }
  return False;
}

static IRSB* hs_instrument(VgCallbackClosure* closure, IRSB* in, const VexGuestLayout* layout,
                           const VexGuestExtents* extents, const VexArchInfo* arch, IRType gWordTy,
                           IRType hWordTy) {
  (void)closure;
  (void)layout;
  (void)extents;
  (void)arch;
  (void)hWordTy;
  if (gWordTy != HS_WORD_TYPE) {
    VG_(tool_panic)("hsdbt: a guest of another word size than the host's");
  }
  IRSB* out = deepCopyIRSBExceptStmts(in);
  Addr insn = 0;  /* the guest instruction the statements belong to */
  UInt insn_len = 0;
  for (Int i = 0; i < in->stmts_used; ++i) {
    IRStmt* st = in->stmts[i];
    if (st == NULL) {
      continue;
    }
    if (st->tag == Ist_IMark) {
      insn = (Addr)st->Ist.IMark.addr;
      insn_len = st->Ist.IMark.len;
    } else if (st->tag == Ist_Exit && st->Ist.Exit.jk == Ijk_Boring && insn != 0) {
      /* A side exit: a conditional branch, unless it only goes on to the next instruction
       * (the condition inverted: the block's end is the branch then) or back to this one for
       * a rep or lock prefix (the instruction repeats; no branch). */
      const Addr dst = constant_word(st->Ist.Exit.dst);
      if (dst != insn + insn_len && !(dst == insn && repeats_itself(insn, insn_len))) {
        add_record(out, insn, word(dst), st->Ist.Exit.guard);
      }
    }
    addStmtToIRSB(out, st);
  }
  /* The block's end: a call, a return, a jump (direct or not), or straight on. A transfer to
   * the next instruction (a block split, `call .+5`, a jump through a lazy PLT slot) is none. */
  const IRJumpKind jk = in->jumpkind;
  if (insn != 0 && (jk == Ijk_Boring || jk == Ijk_Call || jk == Ijk_Ret)) {
    IRExpr* next = in->next;
    const Addr next_insn = insn + insn_len;
    if (next->tag != Iex_Const) {
      add_record_unless_next(out, insn, next, next_insn);
    } else {
      const Addr dst = constant_word(next->Iex.Const.con);
      if (dst != next_insn && !(dst == insn && repeats_itself(insn, insn_len))) {
        add_record(out, insn, next, NULL);
      }
    }
  }
  return out;
}

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
  capacity = 1;
  while (capacity * 2 * sizeof(struct hs_dbt_sample) <= clo_ring_size) {
    capacity *= 2;
  }
  rings = VG_(calloc)("hsdbt.rings", VG_N_THREADS, sizeof(ThreadRing));
  /* The main thread's ring exists before its first instruction (a debugger may start
   * recording there); the others' when they first run. */
  rings[1].header = open_ring();
  open_signals();
  /* One guest branch, one recorded branch: no superblocks chased across jumps, no loops
   * unrolled into straight code (set here, after the command line, so nothing overrides it). */
  VG_(clo_vex_control).guest_chase = False;
  VG_(clo_vex_control).iropt_unroll_thresh = 0;
  hs_current = &hs_scratch.header;
  hs_scratch.header.capacity = 1;
  if (clo_follow_tree) {
    tree_start();
  }
}

static void hs_fini(Int exitcode) {
  (void)exitcode;
  for (ThreadId t = 0; t < VG_N_THREADS; ++t) {
    if (rings[t].header != NULL) {
      rings[t].header->exited_ns = monotonic_ns();
      rings[t].header->state = HS_DBT_RING_EXITED;
    }
  }
  if (clo_follow_tree) {
    tree_end();
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
