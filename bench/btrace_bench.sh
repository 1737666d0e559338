#!/usr/bin/env bash
# btrace_bench.sh - branch-trace recording speed on a branchy C program (bench/progs/branchy.c)
# and on python3 sorting 3000 numbers with a key function (bench/progs/sort.py), same machine,
# same run: Hindsight's `record btrace` with SoftEmulate and with SoftStep beside
# GDB's own `record full` (GDB steps and records; over GNU gdbserver and over Hindsight), the
# program's native time, and the ceiling of any int3-based collector on this machine: the raw
# ptrace round trip PTRACE_CONT -> int3 -> waitpid -> GETREGS/SETREGS (bench/progs/int3_roundtrip.c).
#
#   bench/btrace_bench.sh [PATH_TO_HINDSIGHT]      (default: build/server/hindsight)
#
# Each figure: instructions recorded between bench_start and bench_end (python: between libc's
# getppid and getpgrp, called right before and after the sort) by GDB's own count (`info
# record`), divided by the time of that `continue`; median of $RUNS sessions. `record full` is
# some 100 times slower, so it walks N_FULL numbers instead of N (same code).
# Environment: N (2000 numbers, ~210k instructions), N_FULL (200), PY_N (3000), PY_N_FULL (3),
# FULL_TIMEOUT (300 s per record full session),
# RUNS (3), PY_RUNS (1), PYTHON (/usr/bin/python3), WORKLOADS ("branchy python"), GDB, GDBSERVER.
set -u
source "$(dirname "$0")/common.sh"
N=${N:-2000}
N_FULL=${N_FULL:-200}
RUNS=${RUNS:-3}
PY_N=${PY_N:-3000}
PY_N_FULL=${PY_N_FULL:-3}
FULL_TIMEOUT=${FULL_TIMEOUT:-300}  # seconds a record full session may take
PY_RUNS=${PY_RUNS:-1}
PYTHON=${PYTHON:-/usr/bin/python3}  # the distribution's, not a version manager's shim script
WORKLOADS=${WORKLOADS:-branchy python}

WORK=$(mktemp -d /tmp/hindsight-btrace-bench.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
cc -O1 -g -fno-inline -o "$WORK/branchy" "$HERE/progs/branchy.c" || exit 1
cc -O2 -o "$WORK/int3_roundtrip" "$HERE/progs/int3_roundtrip.c" || exit 1

# The program under test: WORKLOAD=branchy (the C program) or python (the sort).
WORKLOAD=branchy
program() {  # MODE: the command line to debug
  if [ "$WORKLOAD" = python ]; then
    if [ "$1" = full ]; then echo "$PYTHON $HERE/progs/sort.py $PY_N_FULL"; else echo "$PYTHON $HERE/progs/sort.py $PY_N"; fi
  else
    if [ "$1" = full ]; then echo "$WORK/branchy $N_FULL"; else echo "$WORK/branchy $N"; fi
  fi
}

# one SERVER MODE: prints "INSNS SECONDS RATE BRANCHES" of one session, or nothing.
one() {
  local markers=()
  [ "$WORKLOAD" = python ] && markers=(BENCH_START=getppid BENCH_END=getpgrp)
  local limit=1200
  [ "$2" = full ] && limit=$FULL_TIMEOUT
  env "${markers[@]}" BENCH_RECORD="$2" timeout "$limit" "$GDB" -batch -nx \
    -ex "target remote | $1 - $(program "$2")" -x "$HERE/btrace_bench.py" 2>/dev/null |
    awk '/^BENCH/ { print $3, $4, $5, $6 }'
}

median_of() {  # SERVER MODE: the median line by rate
  local runs=$RUNS
  [ "$WORKLOAD" = python ] && runs=$PY_RUNS
  for _ in $(seq "$runs"); do one "$1" "$2"; done | sort -n -k3 | awk '{ a[NR] = $0 } END { if (NR) print a[int((NR + 1) / 2)] }'
}

report() {  # LABEL SERVER MODE
  if [ ! -x "${2%% *}" ]; then
    printf '%-44s n/a (%s missing)\n' "$1" "${2%% *}"
    return
  fi
  local r
  r=$(median_of "$2" "$3")
  if [ -z "$r" ]; then
    if [ "$3" = full ]; then
      printf '%-44s failed or over %d s\n' "$1" "$FULL_TIMEOUT"
    else
      printf '%-44s failed\n' "$1"
    fi
    return
  fi
  set -- "$1" $r
  if [ "${5:-0}" -gt 0 ]; then
    printf '%-44s %9d insns  %7.3f s  %9.0f insns/s  %8.0f branches/s\n' "$1" "$2" "$3" "$4" "$(awk -v b="$5" -v s="$3" 'BEGIN { print b / s }')"
  else
    printf '%-44s %9d insns  %7.3f s  %9.0f insns/s\n' "$1" "$2" "$3" "$4"
  fi
}

if [[ " $WORKLOADS " == *" branchy "* ]]; then
echo "branchy: instructions recorded per second (median of $RUNS; btrace N=$N, full N=$N_FULL)"
start=$(date +%s.%N); "$WORK/branchy" "$N" >/dev/null; end=$(date +%s.%N)
printf '%-44s %7.3f s (whole program)\n' "native run" "$(awk -v a="$start" -v b="$end" 'BEGIN { print b - a }')"
"$WORK/int3_roundtrip" 100000 | awk '{ printf "%-44s %9.0f round trips/s (the ceiling in branches/s)\n", "raw ptrace int3 round trip", $4 }'
report "hindsight record btrace (SoftEmulate)" "$HINDSIGHT --btrace=soft" btrace
report "hindsight record btrace (SoftStep)" "$HINDSIGHT --btrace=step" btrace
report "gdbserver record full (GDB records)" "$GDBSERVER" full
report "hindsight record full (GDB records)" "$HINDSIGHT" full
echo
fi

if [[ " $WORKLOADS " == *" python "* ]]; then
echo "python3 sorting $PY_N numbers with a key function (record full: $PY_N_FULL; median of $PY_RUNS)"
WORKLOAD=python
"$PYTHON" "$HERE/progs/sort.py" "$PY_N" | awk '{ printf "%-44s %7.4f s (the sort alone)\n", "native run", $4 }'
report "hindsight record btrace (SoftEmulate)" "$HINDSIGHT --btrace=soft" btrace
report "hindsight record btrace (SoftStep)" "$HINDSIGHT --btrace=step" btrace
report "gdbserver record full (GDB records)" "$GDBSERVER" full
report "hindsight record full (GDB records)" "$HINDSIGHT" full
fi
