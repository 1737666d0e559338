#!/usr/bin/env bash
# btrace_threads_bench.sh - the server's resident memory while recording many threads with
# GDB's default rings (64 KiB: 2730 branches each), every ring full (bench/progs/many_threads.c).
#
#   bench/btrace_threads_bench.sh [PATH_TO_HINDSIGHT]      (default: build/server/hindsight)
#
# Environment: THREADS (1000), BRANCHES per thread (3000, more than a default ring holds),
# BTRACE (soft), GDB.
set -u
source "$(dirname "$0")/common.sh"
THREADS=${THREADS:-1000}
BRANCHES=${BRANCHES:-3000}
BTRACE=${BTRACE:-soft}

WORK=$(mktemp -d /tmp/hindsight-threads-bench.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
cc -O1 -g -pthread -o "$WORK/many_threads" "$HERE/progs/many_threads.c" || exit 1

line=$(timeout 1200 "$GDB" -batch -nx -ex "target remote | $HINDSIGHT --btrace=$BTRACE - $WORK/many_threads $THREADS $BRANCHES" \
  -x "$HERE/btrace_threads_bench.py" 2>/dev/null | awk '/^BENCH/')
if [ -z "$line" ]; then
  echo "btrace threads bench: the session failed" >&2
  exit 1
fi
set -- $line
echo "$THREADS threads, $BRANCHES branches each, --btrace=$BTRACE, default rings (64 KiB)"
printf '%-44s %d\n' "threads traced" "$2"
printf '%-44s %d of %d (ring capacity %d each)\n' "branches kept, all rings" "$3" "$(($2 * $4))" "$4"
printf '%-44s %d KiB\n' "server RSS before record btrace" "$5"
printf '%-44s %d KiB (peak %d KiB)\n' "server RSS, every ring full" "$6" "$7"
printf '%-44s %.1f KiB per traced thread (a full ring is %.1f KiB of samples)\n' "growth" \
  "$(awk -v a="$5" -v b="$6" -v n="$2" 'BEGIN { print (b - a) / n }')" "$(awk -v c="$4" 'BEGIN { print c * 16 / 1024 }')"
printf '%-44s %.1f s\n' "recording time" "$8"
