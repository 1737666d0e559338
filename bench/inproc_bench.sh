#!/usr/bin/env bash
# inproc_bench.sh - the in-process recorder (--btrace=inproc) in a GDB session, beside the same
# session with no recording, the dbt recorder and SoftEmulate, in one run (issue 43's figure):
#   qsort of $N ints (bench/progs/qsort.c): the seconds of the `continue` from bench_start to
#   bench_end (median of $RUNS), and the whole program natively. SoftEmulate records some 10^4
#   branches/s, so it sorts $SOFT_N ints; its figure is scaled to N by the branch count. inproc
#   also runs while GDB catches a system call (`catch syscall write`, which the sort never
#   makes: its threads run with PTRACE_SYSCALL, qsort's own mmap stops unreported).
#
#   bench/inproc_bench.sh [PATH_TO_HINDSIGHT]      (default: build/server/hindsight)
# Environment: N (1000000), SOFT_N (2000), RUNS (3), BENCH_BUFFER (GDB's buffer in bytes, 67108864:
# the in-process recorder keeps as much between two stops, and GDB decodes it all).
set -u
source "$(dirname "$0")/common.sh"
N=${N:-1000000}
SOFT_N=${SOFT_N:-2000}
RUNS=${RUNS:-3}

WORK=$(mktemp -d /tmp/hindsight-inproc-bench.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
cc -O2 -g -o "$WORK/qsort" "$HERE/progs/qsort.c" || exit 1

median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

session() {  # RECORD BACKEND N [CATCH]: seconds of the recorded continue in one GDB session
  local out
  out=$(cd "$WORK" && BENCH_RECORD=$1 BENCH_CATCH=${4:-} timeout 1200 "$GDB" -batch -nx \
    -ex "target remote | $HINDSIGHT --btrace=$2 - $WORK/qsort $3" -x "$HERE/btrace_bench.py" 2>/dev/null |
    awk '/^BENCH/ { print $4 }')
  echo "${out:-nan}"
}

runs() {  # RECORD BACKEND N: the median of $RUNS sessions
  for _ in $(seq "$RUNS"); do session "$@"; done | median
}

native=$(for _ in $(seq "$RUNS"); do
  start=$(date +%s.%N); "$WORK/qsort" "$N" >/dev/null; end=$(date +%s.%N)
  awk -v a="$start" -v b="$end" 'BEGIN { printf "%.3f\n", b - a }'
done | median)
plain=$(runs none soft "$N")
inproc=$(runs btrace inproc "$N")
plain_catch=$(runs none soft "$N" write)
inproc_catch=$(runs btrace inproc "$N" write)
dbt=$(runs btrace dbt "$N")
soft_small=$(runs btrace soft "$SOFT_N")
plain_small=$(runs none soft "$SOFT_N")
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
echo "qsort of $N ints: the continue from bench_start to bench_end in a GDB session (median of $RUNS)"
printf '%-46s %8.3f s\n' "native, the whole program" "$native"
printf '%-46s %8.3f s\n' "GDB session, not recording" "$plain"
printf '%-46s %8.3f s  (%sx not recording)\n' "--btrace=inproc, record btrace" "$inproc" "$(ratio "$inproc" "$plain")"
printf '%-46s %8.3f s\n' "GDB session, catch syscall write" "$plain_catch"
printf '%-46s %8.3f s  (%sx not recording)\n' "--btrace=inproc, record btrace, catch syscall" \
  "$inproc_catch" "$(ratio "$inproc_catch" "$plain_catch")"
printf '%-46s %8.3f s  (%sx not recording)\n' "--btrace=dbt, record btrace" "$dbt" "$(ratio "$dbt" "$plain")"
printf '%-46s %8.3f s  (%sx not recording, at N=%s)\n' "--btrace=soft, record btrace" "$soft_small" \
  "$(ratio "$soft_small" "$plain_small")" "$SOFT_N"
