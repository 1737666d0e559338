#!/usr/bin/env bash
# test/vm/conformance_i386.sh [SERVER] - GDB 13's own testsuite with a -m32 board, the subset in
# test/vm/conformance_i386.txt, run inside the VM lane's guest (where the kernel runs i386
# programs) against SERVER (default build/server/hindsight) and against GNU gdbserver in the
# same guest, through the conformance harness (../shared/conformance/run.sh). Passes when no
# file does worse than with gdbserver; prints both summaries' totals and the guest's minutes.
# Exit 77 when it cannot run here (no harness, no gdbserver, no DejaGnu, no GDB source), said why.
# Environment: CONFORMANCE_HARNESS (the harness's run.sh), HINDSIGHT_VM_CONFORMANCE_DIR (its
# work folder: the testsuite, builds and results, outside the checkout; default
# ~/.cache/hindsight-vm/conformance), HINDSIGHT_VM_CONFORMANCE_TIMEOUT (seconds, 1800).
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
HARNESS=${CONFORMANCE_HARNESS:-$(realpath -m "$ROOT/../shared/conformance/run.sh")}
SERVER=$(realpath "${1:-$ROOT/build/server/hindsight}")
SUBSET=$ROOT/test/vm/conformance_i386.txt
WORK=${HINDSIGHT_VM_CONFORMANCE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/hindsight-vm/conformance}
TIMEOUT=${HINDSIGHT_VM_CONFORMANCE_TIMEOUT:-1800}

cannot() { echo "conformance_i386: $*"; exit 77; }
[ -x "$HARNESS" ] || cannot "no conformance harness at $HARNESS (CONFORMANCE_HARNESS)"
[ -x /usr/bin/gdbserver ] || cannot "no GNU gdbserver to compare with (apt-get install gdbserver)"
command -v runtest >/dev/null && command -v expect >/dev/null || cannot "no DejaGnu (apt-get install dejagnu expect)"
[ -r /usr/src/gdb.tar.xz ] || cannot "no GDB source to take the testsuite from (apt-get install gdb-source)"
[ -x "$SERVER" ] || { echo "conformance_i386: no server at $SERVER"; exit 1; }
mkdir -p "$WORK" || exit 1

export CONFORMANCE_WORKDIR=$WORK CONFORMANCE_BOARD=conformance-native-gdbserver/-m32 CONFORMANCE_JOBS=2
# GDB's tests wait 10 s for each answer by default; the guest's emulated CPU is some 30x slower.
printf 'set timeout 120\nset gdb_test_timeout 120\n' >"$WORK/slow-cpu.exp"
export DEJAGNU=$WORK/slow-cpu.exp

# The testsuite extracted and each label's build folder configured here, natively (a file that
# is quick everywhere): in the guest that alone would take minutes.
for label in i386-gdbserver i386-hindsight; do
  CONFORMANCE_LABEL=$label "$HARNESS" /usr/bin/gdbserver gdb.server/server-run.exp >/dev/null 2>&1 ||
    { echo "conformance_i386: the harness failed to set up $label"; exit 1; }
done

gdbserver_summary=$WORK/results/i386-gdbserver/summary.txt
ours_summary=$WORK/results/i386-hindsight/summary.txt
start=$(date +%s)
"$ROOT/test/vm/run.sh" --timeout "$TIMEOUT" --share "$WORK" -- bash -c '
  CONFORMANCE_LABEL=i386-gdbserver "$1" /usr/bin/gdbserver "$2" >/dev/null &&
  CONFORMANCE_LABEL=i386-hindsight CONFORMANCE_BASELINE="$4" "$1" "$3" "$2" >/dev/null' \
  _ "$HARNESS" "$SUBSET" "$SERVER" "$gdbserver_summary"
rc=$?
minutes=$(( ($(date +%s) - start + 30) / 60 ))
((rc == 125)) && exit 77
[ -f "$ours_summary" ] && [ -f "$gdbserver_summary" ] || { echo "conformance_i386: no summaries (status $rc)"; exit 1; }
echo "GNU gdbserver: $(tail -1 "$gdbserver_summary")"
echo "$(basename "$SERVER"): $(tail -1 "$ours_summary")   (both in the guest: $minutes min)"
sed -n '/^files worse than baseline/,$p' "$ours_summary"
worse=$(sed -n 's/^files worse than baseline: \([0-9]*\)$/\1/p' "$ours_summary")
[ "$worse" = 0 ] || { echo "conformance_i386: files worse than with gdbserver: ${worse:-unknown}"; exit 1; }
