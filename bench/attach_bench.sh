#!/usr/bin/env bash
# attach_bench.sh - a running program's rate (bench/progs/sorter.c: qsort of 64 ints, forever)
# before a GDB session attaches, while it records with `record btrace` after `--attach`, under
# each collector that can attach (inproc, soft), in one run. dbt cannot attach (it starts the
# program under Valgrind); its rate for the same program started under it is beside them.
#
#   bench/attach_bench.sh [PATH_TO_HINDSIGHT]      (default: build/server/hindsight)
# Environment: SECONDS_RECORDED (4).
set -u
source "$(dirname "$0")/common.sh"
RECORDED=${SECONDS_RECORDED:-4}
DBT_LIB=${DBT_LIB:-$ROOT/build/tracer/dbt/lib}

WORK=$(mktemp -d /tmp/hindsight-attach-bench.XXXXXX)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$WORK"' EXIT
cc -O2 -g -o "$WORK/sorter" "$HERE/progs/sorter.c" || exit 1

rate() {  # FILE FROM TO: sorts per second between monotonic seconds FROM and TO
  awk -v a="$2" -v b="$3" -F'[= ]' '$2 >= a && $2 <= b { if (!t0) { t0 = $2; n0 = $4 } t1 = $2; n1 = $4 }
    END { printf "%.0f", (t1 > t0 ? (n1 - n0) / (t1 - t0) : 0) }' "$1"
}
clock() { python3 -c 'import time; print("%.3f" % time.monotonic())'; }

attached() {  # COLLECTOR: "BEFORE WHILE" sorts/s of one running sorter
  local out=$WORK/sorter-$1.txt
  "$WORK/sorter" > "$out" &
  local pid=$!
  sleep 1.5
  local t0 t1
  t0=$(clock)
  sleep 1
  t1=$(clock)
  local before
  before=$(rate "$out" "$t0" "$t1")
  # Ctrl-C (SIGINT) ends the continue after RECORDED seconds; the session then detaches. To GDB
  # alone (--foreground): timeout would also signal its process group, where the server that
  # `target remote |` started is, and a server ends on SIGINT.
  timeout --foreground -s INT $((RECORDED + 3)) "$GDB" -batch -nx -ex "target remote | $HINDSIGHT --btrace=$1 --attach - $pid" \
    -ex "record btrace" -ex "python import time; print('BENCH-RECORDING %.3f' % time.monotonic())" \
    -ex "continue" -ex "record stop" -ex "detach" > "$WORK/gdb-$1.txt" 2>&1
  local from
  from=$(awk '/^BENCH-RECORDING/ { print $2 + 0.5 }' "$WORK/gdb-$1.txt")
  local during
  during=$(rate "$out" "${from:-0}" "$(awk -v f="${from:-0}" -v r="$RECORDED" 'BEGIN { print f + r }')")
  kill "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
  echo "$before $during"
}

echo "sorter (qsort of 64 ints, forever): sorts per second before attaching and while recording after --attach"
for collector in inproc soft; do
  read -r before during < <(attached "$collector")
  printf '%-34s before %9s/s  recording %9s/s  (%s of native)\n' "--btrace=$collector" "$before" "$during" \
    "$(awk -v a="$during" -v b="$before" 'BEGIN { printf "%.1f%%", (b > 0 ? 100 * a / b : 0) }')"
done
if [ -x "$DBT_LIB/hsdbt-amd64-linux" ]; then
  out=$WORK/sorter-dbt.txt
  VALGRIND_LIB="$DBT_LIB" valgrind -q --tool=hsdbt --ring-dir="$WORK" "$WORK/sorter" > "$out" 2>/dev/null &
  sleep 4
  t1=$(clock)
  kill %% 2>/dev/null
  printf '%-34s (cannot attach) started under it: %9s/s\n' "--btrace=dbt" "$(rate "$out" "$(awk -v t="$t1" 'BEGIN { print t - 2 }')" "$t1")"
fi
