#!/usr/bin/env bash
# conformance-btrace.sh - GDB 13.1's gdb.btrace tests against Hindsight, once per software
# collector, and the per-file difference (issue: soft must pass at least as much as step).
#
#   scripts/conformance-btrace.sh [PATH_TO_HINDSIGHT] [SUBSET]   (default: build/server/hindsight btrace)
#
# The harness runs `SERVER --once ...`; a wrapper per collector adds --btrace=NAME. The binary is
# copied first, so rebuilding during the run changes nothing. Results: ~/.cache/gdb-conformance/
# results/btrace-{step,soft}/summary.txt.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SERVER=$(realpath "${1:-$ROOT/build/server/hindsight}")
SUBSET=${2:-btrace}
HARNESS=${CONFORMANCE_HARNESS:-$ROOT/../shared/conformance/run.sh}
WORK=$(mktemp -d /tmp/hindsight-conformance.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
cp "$SERVER" "$WORK/hindsight"
for backend in step soft; do
  printf '#!/bin/sh\nexec %s --btrace=%s "$@"\n' "$WORK/hindsight" "$backend" >"$WORK/hindsight-$backend"
  chmod +x "$WORK/hindsight-$backend"
  echo "== --btrace=$backend"
  CONFORMANCE_LABEL="btrace-$backend" "$HARNESS" "$WORK/hindsight-$backend" "$SUBSET" | tail -n 3
done
RESULTS=${CONFORMANCE_WORKDIR:-$HOME/.cache/gdb-conformance}/results
# Per-file counts: the files where soft passes less or fails more than step.
python3 - "$RESULTS/btrace-step/gdb.sum" "$RESULTS/btrace-soft/gdb.sum" <<'PY'
import collections, re, sys
def counts(path):
    c = collections.defaultdict(lambda: collections.Counter())
    current = None
    for line in open(path, errors="replace"):
        m = re.match(r"Running .*/(gdb\.\w+/[^ ]+\.exp) \.\.\.", line)
        if m:
            current = m.group(1)
        m = re.match(r"(PASS|FAIL|UNRESOLVED|UNSUPPORTED|UNTESTED|XFAIL|KFAIL):", line)
        if m and current:
            c[current][m.group(1)] += 1
    return c
step, soft = counts(sys.argv[1]), counts(sys.argv[2])
worse = []
for f in sorted(set(step) | set(soft)):
    a, b = step[f], soft[f]
    if b["PASS"] < a["PASS"] or b["FAIL"] + b["UNRESOLVED"] > a["FAIL"] + a["UNRESOLVED"]:
        worse.append(f"{f}: step {a['PASS']} passed {a['FAIL'] + a['UNRESOLVED']} failed, "
                     f"soft {b['PASS']} passed {b['FAIL'] + b['UNRESOLVED']} failed")
print(f"{len(worse)} files where soft does worse than step")
for w in worse:
    print("  " + w)
PY
