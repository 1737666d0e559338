#!/usr/bin/env bash
# test/vm/test_lane.sh - the VM lane's own checks (test/vm/run.sh): a command's output and exit
# status come back, a 32-bit program runs in the guest, a guest that runs too long is killed
# (124), a missing QEMU is said (125). Exit 0 when all hold; each check says what it saw.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
RUN=$HERE/run.sh
failures=0
check() {  # NAME CONDITION-STATUS: one line per check
  if [ "$2" -eq 0 ]; then echo "ok    $1"; else echo "FAIL  $1"; failures=$((failures + 1)); fi
}
work=$(mktemp -d /tmp/hindsight-lane.XXXXXX)
trap 'rm -rf "$work"' EXIT

# Output (stdout and stderr) and the status, from the current directory and this environment.
cd "$work"
out=$(LANE_CHECK=passed "$RUN" --timeout 300 -- sh -c 'echo "in $(pwd) $LANE_CHECK"; echo to-stderr >&2; exit 3' 2>&1)
status=$?
echo "$out" | sed 's/^/      /'
check "status passed back (3)" "$([ $status -eq 3 ] && echo 0 || echo 1)"
check "output, directory and environment passed" "$(echo "$out" | grep -qx "in $work passed" && echo "$out" | grep -qx to-stderr && echo 0 || echo 1)"

# What this host may refuse: a 32-bit program (gcc -m32), run in the guest's own kernel.
printf '#include <stdio.h>\nint main(void) { printf("%%d-bit\\n", (int)sizeof(void *) * 8); return 7; }\n' >bits.c
if gcc -m32 -o bits32 bits.c 2>"$work/gcc.err"; then
  out=$("$RUN" --timeout 300 -- ./bits32 2>&1)
  status=$?
  echo "$out" | sed 's/^/      /'
  check "a 32-bit program runs in the guest (status 7, 32-bit)" "$([ $status -eq 7 ] && echo "$out" | grep -qx 32-bit && echo 0 || echo 1)"
else
  sed 's/^/      /' "$work/gcc.err"
  check "gcc -m32 builds a program (gcc-multilib)" 1
fi

# A guest that runs too long is killed, and says so.
start=$(date +%s)
out=$("$RUN" --timeout 25 -- sleep 600 2>&1)
status=$?
took=$(($(date +%s) - start))
echo "$out" | sed 's/^/      /'
check "a guest past --timeout is killed: 124 in ${took} s" "$([ $status -eq 124 ] && [ $took -lt 60 ] && echo "$out" | grep -q 'ran out of time' && echo 0 || echo 1)"

# No QEMU: said at once, 125.
out=$(QEMU=/nonexistent/qemu-system-x86_64 "$RUN" true 2>&1)
status=$?
echo "$out" | sed 's/^/      /'
check "no QEMU: 125 and the package named" "$([ $status -eq 125 ] && echo "$out" | grep -q qemu-system-x86 && echo 0 || echo 1)"

exit $((failures > 0))
