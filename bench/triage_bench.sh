#!/usr/bin/env bash
# triage_bench.sh - what `hindsight triage` costs: wall time of a C test program and of a
# Python test run, native and under triage with each history collector, in one run (medians
# of $RUNS; the slow collectors run once, capped at $CAP seconds).
#   C:      bench/progs/qsort.c sorting $N ints (a test binary doing real work)
#   Python: python3 -m unittest bench/progs/test_sample.py
#
#   bench/triage_bench.sh [PATH_TO_HINDSIGHT]      (default: build/server/hindsight)
# Environment: N (20000), RUNS (3), CAP (300), COLLECTORS ("dbt soft step"), WORKLOADS ("c python").
set -u
source "$(dirname "$0")/common.sh"
N=${N:-20000}
RUNS=${RUNS:-3}
CAP=${CAP:-300}
COLLECTORS=${COLLECTORS:-dbt soft step}
WORKLOADS=${WORKLOADS:-c python}

WORK=$(mktemp -d /tmp/hindsight-triage-bench.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
cc -O2 -g -o "$WORK/qsort" "$HERE/progs/qsort.c" || exit 1

seconds() {  # CMD...: wall seconds of one run ("cap" when it ran out of time)
  local start end
  start=$(date +%s.%N)
  timeout "$CAP" "$@" >/dev/null 2>&1
  local rc=$?
  end=$(date +%s.%N)
  if [ "$rc" = 124 ]; then echo cap; return; fi
  awk -v a="$start" -v b="$end" 'BEGIN { printf "%.3f", b - a }'
}

median_of() {  # RUNS CMD...: median seconds
  local runs=$1
  shift
  for _ in $(seq "$runs"); do seconds "$@"; echo; done | grep . | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}

row() {  # LABEL CMD...
  local label=$1
  shift
  local native
  native=$(median_of "$RUNS" "$@")
  printf "%-34s %10s s\n" "$label: native" "$native"
  for c in $COLLECTORS; do
    local runs=$RUNS t
    [ "$c" = dbt ] || runs=1
    t=$(median_of "$runs" "$HINDSIGHT" triage --btrace="$c" -- "$@")
    if [ "$t" = cap ]; then
      printf "%-34s %10s   (not done in %s s)\n" "$label: triage --btrace=$c" ">$CAP" "$CAP"
    else
      printf "%-34s %10s s  %8.1fx native\n" "$label: triage --btrace=$c" "$t" "$(awk -v a="$t" -v b="$native" 'BEGIN { print a / b }')"
    fi
  done
}

echo "triage_bench: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
[[ " $WORKLOADS " == *" c "* ]] && row "C qsort of $N ints" "$WORK/qsort" "$N"
[[ " $WORKLOADS " == *" python "* ]] && row "python3 -m unittest (3 tests)" /usr/bin/python3 -m unittest "$HERE/progs/test_sample.py"
