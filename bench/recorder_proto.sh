#!/usr/bin/env bash
# recorder_proto.sh - the in-process recorder's prototype (tracer/inprocess/recorder) beside
# native: qsort of N ints with a comparison function (bench/progs/recorder_qsort.cpp), the sort
# alone timed inside the process (wall clock, and the thread's CPU time, steadier on a loaded
# machine), RUNS runs of each mode interleaved, medians and ratios:
#   native    qsort as the program runs it
#   recorded  run in the code cache, every taken branch stored in the thread's ring
#   empty     run in the code cache with no ring stores (what the translation alone costs)
#
#   bench/recorder_proto.sh [PATH_TO_recorder_qsort]   (default: build/tracer/inprocess/recorder/)
# Environment: N (1000000), RUNS (7).
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=${1:-$ROOT/build/tracer/inprocess/recorder/recorder_qsort}
N=${N:-1000000}
RUNS=${RUNS:-7}
[ -x "$BIN" ] || { echo "recorder_proto: $BIN not built (ninja -C build)" >&2; exit 1; }

declare -A times cpus
branches=0
for ((i = 0; i < RUNS; i++)); do
  for mode in native recorded empty; do
    line=$(RECORDER_MIX=1 "$BIN" "$mode" "$N") || { echo "recorder_proto: $mode failed: $line" >&2; exit 1; }
    ms=$(sed -n 's/.* ms=\([0-9.]*\).*/\1/p' <<<"$line")
    times[$mode]+="$ms "
    cpus[$mode]+="$(sed -n 's/.* cpu_ms=\([0-9.]*\).*/\1/p' <<<"$line") "
    if [ "$mode" = recorded ]; then
      branches=$(sed -n 's/.* branches=\([0-9]*\).*/\1/p' <<<"$line")
      detail=$line
    fi
  done
done

median() { tr ' ' '\n' <<<"$1" | grep . | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
echo "qsort of $N ints, median of $RUNS runs each (load: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) CPUs)"
printf '  %-9s %9s %7s %9s %7s\n' "" "wall ms" "x" "cpu ms" "x"
for mode in native recorded empty; do
  w=$(median "${times[$mode]}")
  c=$(median "${cpus[$mode]}")
  printf '  %-9s %9.1f %7s %9.1f %7s\n' "$mode" "$w" "$(ratio "$w" "$(median "${times[native]}")")" \
    "$c" "$(ratio "$c" "$(median "${cpus[native]}")")"
done
recorded=$(median "${times[recorded]}")
echo "  recorded: $branches taken branches, $(awk -v n="$branches" -v t="$recorded" 'BEGIN { printf "%.0f", n / t / 1000 }') M branches/s (wall); empty = translated with no ring stores"
echo "  last recorded run: ${detail//$'\n'/; }"
