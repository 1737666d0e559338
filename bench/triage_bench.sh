#!/usr/bin/env bash
# triage_bench.sh - what `hindsight triage` costs: wall time of a C test program and of a
# Python test run, native and under triage with each history collector, in one run (medians
# of $RUNS for native, inproc and dbt; the slow collectors run once, capped at $CAP seconds).
# A run that did not end as the program does natively (status 0) shows as "failed".
#   C:      bench/progs/qsort.c sorting $N ints (a test binary doing real work)
#   Python: python3 -m unittest (discover) bench/progs/test_sample.py
# Process trees (triage follows every descendant), each beside Valgrind's own floor
# (valgrind --tool=none --trace-children=yes: the start-up every process under Valgrind pays):
#   driver: a shell running $DRIVER short test binaries (qsort of 1000 ints) one after another
#   spawn:  python3 -m unittest (discover) bench/progs/test_spawning.py (tests that start programs)
#   many:   a shell running $MANY short binaries: wall time, and the peak space the rings take
#           in the recorder's directory (sampled every 0.1 s)
#   pytree: a shell running $PYTREE python3 processes one after another (python3 -c pass: the
#           start-up each python3 of a test tree pays)
#   startup: one process's start-up under triage --btrace=inproc beside its native run, medians
#           of $STARTUP_RUNS: /bin/true, a C program (qsort of 100 ints), python3 -c pass
#
#   bench/triage_bench.sh [PATH_TO_HINDSIGHT]      (default: build/server/hindsight)
# Environment: N (20000), RUNS (3), CAP (300), COLLECTORS ("inproc dbt soft step"),
# WORKLOADS ("c python driver spawn many pytree startup"), DRIVER (200), MANY (2000), PYTREE (100),
# STARTUP_RUNS (7), TREE_COLLECTORS ("inproc dbt").
set -u
source "$(dirname "$0")/common.sh"
N=${N:-20000}
RUNS=${RUNS:-3}
CAP=${CAP:-300}
COLLECTORS=${COLLECTORS:-inproc dbt soft step}
WORKLOADS=${WORKLOADS:-c python driver spawn many pytree startup}
DRIVER=${DRIVER:-200}
MANY=${MANY:-2000}
PYTREE=${PYTREE:-100}
STARTUP_RUNS=${STARTUP_RUNS:-7}
TREE_COLLECTORS=${TREE_COLLECTORS:-inproc dbt}

WORK=$(mktemp -d /tmp/hindsight-triage-bench.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
cc -O2 -g -o "$WORK/qsort" "$HERE/progs/qsort.c" || exit 1

seconds() {  # CMD...: wall seconds of one run ("cap" when it ran out of time, "failed" if not status 0)
  local start end
  start=$(date +%s.%N)
  timeout "$CAP" "$@" >/dev/null 2>&1
  local rc=$?
  end=$(date +%s.%N)
  if [ "$rc" = 124 ]; then echo cap; return; fi
  if [ "$rc" != 0 ]; then echo failed; return; fi
  awk -v a="$start" -v b="$end" 'BEGIN { printf "%.3f", b - a }'
}

median_of() {  # RUNS CMD...: median seconds (or "cap"/"failed" if any run was)
  local runs=$1
  shift
  local all
  all=$(for _ in $(seq "$runs"); do seconds "$@"; echo; done | grep .)
  for word in failed cap; do
    if grep -qx "$word" <<<"$all"; then echo "$word"; return; fi
  done
  sort -g <<<"$all" | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}

row() {  # LABEL CMD...
  local label=$1
  shift
  local native
  native=$(median_of "$RUNS" "$@")
  printf "%-34s %10s s\n" "$label: native" "$native"
  for c in $COLLECTORS; do
    local runs=$RUNS t
    case "$c" in inproc | dbt) ;; *) runs=1 ;; esac
    t=$(median_of "$runs" "$HINDSIGHT" triage --btrace="$c" -- "$@")
    if [ "$t" = cap ]; then
      printf "%-34s %10s   (not done in %s s)\n" "$label: triage --btrace=$c" ">$CAP" "$CAP"
    elif [ "$t" = failed ]; then
      printf "%-34s %10s\n" "$label: triage --btrace=$c" "failed"
    else
      printf "%-34s %10s s  %8.1fx native\n" "$label: triage --btrace=$c" "$t" "$(awk -v a="$t" -v b="$native" 'BEGIN { print a / b }')"
    fi
  done
}

echo "triage_bench: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
[[ " $WORKLOADS " == *" c "* ]] && row "C qsort of $N ints" "$WORK/qsort" "$N"
[[ " $WORKLOADS " == *" python "* ]] && row "python3 -m unittest (3 tests)" /usr/bin/python3 -m unittest discover -s "$HERE/progs" -p test_sample.py

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "?" }'; }

tree_row() {  # LABEL CMD...: native, Valgrind's floor, triage under each tree collector
  local label=$1
  shift
  local native floor
  native=$(median_of "$RUNS" "$@")
  floor=$(median_of "$RUNS" valgrind -q --tool=none --trace-children=yes "$@")
  printf "%-40s %10s s\n" "$label: native" "$native"
  printf "%-40s %10s s  %8sx native\n" "$label: valgrind --tool=none (floor)" "$floor" "$(ratio "$floor" "$native")"
  for c in $TREE_COLLECTORS; do
    local t
    t=$(median_of "$RUNS" "$HINDSIGHT" triage --btrace="$c" -- "$@")
    if [ "$t" = cap ]; then
      printf "%-40s %10s   (not done in %s s)\n" "$label: triage --btrace=$c" ">$CAP" "$CAP"
    elif [ "$t" = failed ]; then
      printf "%-40s %10s\n" "$label: triage --btrace=$c" "failed"
    else
      printf "%-40s %10s s  %8sx native  %6sx the floor\n" "$label: triage --btrace=$c" "$t" "$(ratio "$t" "$native")" \
        "$(ratio "$t" "$floor")"
    fi
  done
}

# The peak of what the recorder's directories hold (KiB) while CMD runs under triage.
peak_ring_kib() {
  local before peak=0 pid now k
  before=$(ls -d /dev/shm/hindsight-dbt.* 2>/dev/null)
  "$@" >/dev/null 2>&1 &
  pid=$!
  while kill -0 "$pid" 2>/dev/null; do
    now=0
    for d in /dev/shm/hindsight-dbt.*; do
      [ -d "$d" ] || continue
      case " $before " in *" $d "*) continue ;; esac
      k=$(du -sk "$d" 2>/dev/null | cut -f1)  # (gone meanwhile: nothing)
      now=$((now + ${k:-0}))
    done
    [ "$now" -gt "$peak" ] && peak=$now
    sleep 0.1
  done
  wait "$pid"
  echo "$peak $?"
}

startup_row() {  # LABEL CMD...: one process, native and under triage --btrace=inproc (ms, and what triage adds)
  local label=$1
  shift
  local native triage
  native=$(median_of "$STARTUP_RUNS" "$@")
  triage=$(median_of "$STARTUP_RUNS" "$HINDSIGHT" triage --btrace=inproc -- "$@")
  awk -v l="$label" -v n="$native" -v t="$triage" \
    'BEGIN { printf "%-40s native %6.1f ms  triage --btrace=inproc %6.1f ms  (+%.1f ms)\n", l, n * 1000, t * 1000, (t - n) * 1000 }'
}
if [[ " $WORKLOADS " == *" startup "* ]]; then
  startup_row "start-up: /bin/true" /bin/true
  startup_row "start-up: a C program (qsort of 100)" "$WORK/qsort" 100
  startup_row "start-up: python3 -c pass" /usr/bin/python3 -c pass
fi

if [[ " $WORKLOADS " == *" driver "* || " $WORKLOADS " == *" spawn "* || " $WORKLOADS " == *" many "* ]]; then
  cc -O2 -g -o "$WORK/unit" "$HERE/progs/qsort.c" || exit 1
fi
[[ " $WORKLOADS " == *" driver "* ]] &&
  tree_row "driver of $DRIVER test binaries" /bin/sh -c "for i in \$(seq $DRIVER); do $WORK/unit 1000 >/dev/null || exit 1; done"
[[ " $WORKLOADS " == *" pytree "* ]] &&
  tree_row "$PYTREE python3 processes" /bin/sh -c "for i in \$(seq $PYTREE); do /usr/bin/python3 -c pass || exit 1; done"
[[ " $WORKLOADS " == *" spawn "* ]] &&
  SPAWN_PROG="$WORK/unit" tree_row "python3 -m unittest (spawning tests)" /usr/bin/python3 -m unittest discover -s "$HERE/progs" -p test_spawning.py
if [[ " $WORKLOADS " == *" many "* ]]; then
  many=(/bin/sh -c "for i in \$(seq $MANY); do $WORK/unit 100 >/dev/null || { echo \$i > $WORK/failed; exit 1; }; done")
  native=$(seconds "${many[@]}")
  start=$(date +%s.%N)
  read -r peak status < <(peak_ring_kib "$HINDSIGHT" triage --btrace=dbt -- "${many[@]}")
  wall=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.3f", b - a }')
  printf "%-40s %10s s\n" "$MANY short processes: native" "$native"
  if [ "$status" != 0 ]; then
    printf "%-40s   failed (status %s, at process %s)\n" "$MANY short processes: triage --btrace=dbt" "$status" \
      "$(cat "$WORK/failed" 2>/dev/null)"
  else
    printf "%-40s %10s s  %8sx native  peak ring space %s KiB\n" "$MANY short processes: triage --btrace=dbt" "$wall" \
      "$(ratio "$wall" "$native")" "$peak"
  fi
fi
