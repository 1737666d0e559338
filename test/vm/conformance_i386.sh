#!/usr/bin/env bash
# test/vm/conformance_i386.sh [SERVER] - GDB 13's own testsuite with a -m32 board, the subset in
# test/vm/conformance_i386.txt, run inside the VM lane's guest (where the kernel runs i386
# programs) against SERVER (default build/server/hindsight), through the conformance harness
# (../shared/conformance/run.sh). Passes when no file does worse than GNU gdbserver did in the
# same guest: its summary is kept in test/vm/conformance_i386-gdbserver.txt, so each run pays
# for one server, not two. Prints both totals and the guest's minutes.
#   test/vm/conformance_i386.sh --baseline   runs GNU gdbserver in the guest instead and rewrites
#     that summary (after changing the subset, the guest's kernel or GDB).
# Exit 77 when it cannot run here (no harness, no DejaGnu, no GDB source; with --baseline, no
# gdbserver), said why.
# Environment: CONFORMANCE_HARNESS (the harness's run.sh), HINDSIGHT_VM_CONFORMANCE_DIR (its
# work folder: the testsuite, builds and results, outside the checkout; default
# ~/.cache/hindsight-vm/conformance), HINDSIGHT_VM_CONFORMANCE_TIMEOUT (seconds, 1800).
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
HARNESS=${CONFORMANCE_HARNESS:-$(realpath -m "$ROOT/../shared/conformance/run.sh")}
SUBSET=$ROOT/test/vm/conformance_i386.txt
BASELINE=$ROOT/test/vm/conformance_i386-gdbserver.txt
if [ "${1:-}" = --baseline ]; then
  SERVER=/usr/bin/gdbserver label=i386-gdbserver
else
  SERVER=$(realpath "${1:-$ROOT/build/server/hindsight}") label=i386-hindsight
fi
WORK=${HINDSIGHT_VM_CONFORMANCE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/hindsight-vm/conformance}
TIMEOUT=${HINDSIGHT_VM_CONFORMANCE_TIMEOUT:-1800}

cannot() { echo "conformance_i386: $*"; exit 77; }
[ -x "$HARNESS" ] || cannot "no conformance harness at $HARNESS (CONFORMANCE_HARNESS)"
[ "$label" = i386-hindsight ] || [ -x /usr/bin/gdbserver ] || cannot "no GNU gdbserver (apt-get install gdbserver)"
command -v runtest >/dev/null && command -v expect >/dev/null || cannot "no DejaGnu (apt-get install dejagnu expect)"
[ -r /usr/src/gdb.tar.xz ] || cannot "no GDB source to take the testsuite from (apt-get install gdb-source)"
[ -x "$SERVER" ] || { echo "conformance_i386: no server at $SERVER"; exit 1; }
mkdir -p "$WORK" || exit 1

export CONFORMANCE_WORKDIR=$WORK CONFORMANCE_BOARD=conformance-native-gdbserver/-m32 CONFORMANCE_JOBS=2
# GDB's tests wait 10 s for each answer by default; the guest's emulated CPU is some 30x slower.
printf 'set timeout 120\nset gdb_test_timeout 120\n' >"$WORK/slow-cpu.exp"
export DEJAGNU=$WORK/slow-cpu.exp

# The testsuite extracted and the label's build folder configured here, natively (a file that
# is quick everywhere): in the guest that alone would take minutes.
CONFORMANCE_LABEL=$label "$HARNESS" "$SERVER" gdb.server/server-run.exp >/dev/null 2>&1 ||
  { echo "conformance_i386: the harness failed to set up $label"; exit 1; }

# The kept gdbserver summary must be of this subset: the same files, no more, no fewer.
subset_files() { grep -v '^#' "$SUBSET" | grep . | sort; }
baseline_files() { sed -n 's/^  \(gdb\.[^ ]*\.exp\) .*/\1/p' "$BASELINE" | sort -u; }
if [ "$label" = i386-hindsight ]; then
  [ -f "$BASELINE" ] || { echo "conformance_i386: no gdbserver summary $BASELINE (run with --baseline)"; exit 1; }
  if [ "$(subset_files)" != "$(baseline_files)" ]; then
    echo "conformance_i386: $BASELINE is not of the subset in $SUBSET (run with --baseline):"
    diff <(baseline_files) <(subset_files) | sed -n 's/^[<>]/  &/p'
    exit 1
  fi
fi

summary=$WORK/results/$label/summary.txt
rm -f "$summary"
compare_with=$BASELINE
[ "$label" = i386-gdbserver ] && compare_with=$WORK/none
start=$(date +%s)
"$ROOT/test/vm/run.sh" --timeout "$TIMEOUT" --share "$WORK" -- env CONFORMANCE_LABEL="$label" \
  CONFORMANCE_BASELINE="$compare_with" "$HARNESS" "$SERVER" "$SUBSET" >/dev/null
rc=$?
minutes=$(( ($(date +%s) - start + 30) / 60 ))
((rc == 125)) && exit 77
[ -f "$summary" ] || { echo "conformance_i386: no summary (status $rc)"; exit 1; }
if [ "$label" = i386-gdbserver ]; then
  cp "$summary" "$BASELINE"
  echo "GNU gdbserver: $(tail -1 "$summary")   (in the guest: $minutes min); kept in $BASELINE"
  exit 0
fi
echo "GNU gdbserver: $(sed -n 's/^\([0-9]* passed, [0-9]* failed\)$/\1/p' "$BASELINE" | tail -1)   (kept: $(basename "$BASELINE"))"
echo "$(basename "$SERVER"): $(tail -1 "$summary")   (in the guest: $minutes min)"
sed -n '/^files worse than baseline/,$p' "$summary"
worse=$(sed -n 's/^files worse than baseline: \([0-9]*\)$/\1/p' "$summary")
[ "$worse" = 0 ] || { echo "conformance_i386: files worse than with gdbserver: ${worse:-unknown}"; exit 1; }
