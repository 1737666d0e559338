#!/usr/bin/env bash
# dbt_bench.sh - the dbt recorder (a Valgrind tool, tracer/dbt) beside native runs, Valgrind
# with no tool, and the ptrace collectors, in one run:
#   qsort of 1e6 ints (bench/progs/qsort.c) and python3 sorting 3000 numbers (progs/sort.py):
#   whole-program seconds (median of $RUNS) and branches recorded per second.
# SoftEmulate and SoftStep record some 10^4 branches/s, so they record a smaller sort
# ($SOFT_N ints, between bench_start and bench_end, through GDB): their rate is the figure.
#
#   bench/dbt_bench.sh [PATH_TO_HINDSIGHT]      (default: build/server/hindsight)
# Environment: N (1000000), SOFT_N (2000), PY_N (3000), RUNS (3), PYTHON (/usr/bin/python3).
set -u
source "$(dirname "$0")/common.sh"
N=${N:-1000000}
SOFT_N=${SOFT_N:-2000}
PY_N=${PY_N:-3000}
RUNS=${RUNS:-3}
PYTHON=${PYTHON:-/usr/bin/python3}
DBT_LIB=${DBT_LIB:-$ROOT/build/tracer/dbt/lib}
[ -x "$DBT_LIB/hsdbt-amd64-linux" ] || { echo "dbt_bench: $DBT_LIB/hsdbt-amd64-linux not built" >&2; exit 1; }

WORK=$(mktemp -d /tmp/hindsight-dbt-bench.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
cc -O2 -g -o "$WORK/qsort" "$HERE/progs/qsort.c" || exit 1

seconds() {  # CMD...: wall seconds of one run
  local start end
  start=$(date +%s.%N)
  "$@" >/dev/null 2>&1 || { echo "dbt_bench: failed: $*" >&2; }
  end=$(date +%s.%N)
  awk -v a="$start" -v b="$end" 'BEGIN { printf "%.3f", b - a }'
}

median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

ring_branches() {  # DIR: branches written to every ring there
  python3 - "$1" <<'PY'
import glob, struct, sys
total = 0
for f in glob.glob(sys.argv[1] + "/hsdbt.*"):
    with open(f, "rb") as fh:
        total += struct.unpack_from("<QIIQQQQ", fh.read(64))[6]
print(total)
PY
}

dbt_run() {  # CMD...: "SECONDS BRANCHES" of one run under the recorder
  local dir="$WORK/rings"
  rm -rf "$dir" && mkdir -p "$dir"
  local s
  s=$(VALGRIND_LIB="$DBT_LIB" seconds valgrind -q --tool=hsdbt --ring-dir="$dir" "$@")
  echo "$s $(ring_branches "$dir")"
}

figures() {  # LABEL CMD...: native, valgrind --tool=none, dbt
  local label=$1
  shift
  local native none dbt_s dbt_b line i
  native=$(for i in $(seq "$RUNS"); do seconds "$@"; echo; done | median)
  none=$(for i in $(seq "$RUNS"); do seconds valgrind -q --tool=none "$@"; echo; done | median)
  line=$(for i in $(seq "$RUNS"); do dbt_run "$@"; done | sort -g | awk '{ l[NR] = $0 } END { print l[int((NR + 1) / 2)] }')
  dbt_s=${line% *}
  dbt_b=${line#* }
  echo "$label (whole program, median of $RUNS)"
  printf '%-44s %8.3f s\n' "native" "$native"
  printf '%-44s %8.3f s  (%.2fx native)\n' "valgrind --tool=none" "$none" "$(awk -v a="$none" -v b="$native" 'BEGIN { print a / b }')"
  printf '%-44s %8.3f s  (%.2fx native)  %d branches  %.0f branches/s\n' "dbt recorder (hsdbt)" "$dbt_s" \
    "$(awk -v a="$dbt_s" -v b="$native" 'BEGIN { print a / b }')" "$dbt_b" "$(awk -v a="$dbt_b" -v s="$dbt_s" 'BEGIN { print a / s }')"
  DBT_RATE=$(awk -v a="$dbt_b" -v s="$dbt_s" 'BEGIN { print a / s }')
}

soft() {  # MODE PROGRAM...: branches/s of a GDB session recording between the markers
  local out
  out=$(BENCH_RECORD=btrace timeout 1200 "$GDB" -batch -nx -ex "target remote | $HINDSIGHT --btrace=$1 - ${*:2}" \
    -x "$HERE/btrace_bench.py" 2>/dev/null | awk '/^BENCH/ { print $4, $6 }')
  [ -n "$out" ] || { echo 0; return; }
  awk -v s="${out% *}" -v b="${out#* }" 'BEGIN { print (s > 0 ? b / s : 0) }'
}

report_soft() {  # LABEL RATE
  printf '%-44s %8.0f branches/s  (dbt: %.0fx)\n' "$1" "$2" "$(awk -v d="$DBT_RATE" -v r="$2" 'BEGIN { print (r > 0 ? d / r : 0) }')"
}

figures "qsort of $N ints" "$WORK/qsort" "$N"
report_soft "SoftEmulate (qsort of $SOFT_N, through GDB)" "$(soft soft "$WORK/qsort" "$SOFT_N")"
report_soft "SoftStep (qsort of $SOFT_N, through GDB)" "$(soft step "$WORK/qsort" "$SOFT_N")"
echo
# The same for an i386 build of it, where the kernel runs 32-bit programs and both are built.
if [ ! -x "$DBT_LIB/hsdbt-x86-linux" ]; then
  echo "(no i386 figures: the recorder for i386 programs is not built)"
elif ! cc -m32 -O2 -g -o "$WORK/qsort_m32" "$HERE/progs/qsort.c" 2>/dev/null || ! "$WORK/qsort_m32" 10 >/dev/null 2>&1; then
  echo "(no i386 figures: no -m32 toolchain, or this kernel refuses 32-bit programs)"
else
  figures "i386 (-m32): qsort of $N ints" "$WORK/qsort_m32" "$N"
  report_soft "SoftEmulate (i386 qsort of $SOFT_N, through GDB)" "$(soft soft "$WORK/qsort_m32" "$SOFT_N")"
  report_soft "SoftStep (i386 qsort of $SOFT_N, through GDB)" "$(soft step "$WORK/qsort_m32" "$SOFT_N")"
fi
echo
figures "python3 sorting $PY_N numbers" "$PYTHON" "$HERE/progs/sort.py" "$PY_N"
