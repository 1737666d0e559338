#!/usr/bin/env bash
# test/containers/differences.sh BUILD_DIR - what a container with the engine's default seccomp
# profile changes for the server, each checked where it shows (docs/usage.md, "In containers"):
# the profile is in force; personality(ADDR_NO_RANDOMIZE) is refused, and the server says so in
# GNU gdbserver's words (gdbserver runs on the same program to compare); perf_event_open is
# refused, and --version says why BTS cannot record; no CAP_SYS_PTRACE and what ptrace scope is
# left. Run on the host, it runs itself in the container (test/containers/run.sh). Exit 0 when
# all hold; 77 when no container can run here (the reason on the last line).
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
BUILD_DIR=$(cd "${1:?usage: test/containers/differences.sh BUILD_DIR}" && pwd)
if [[ -z ${container:-} ]]; then
  "$HERE/run.sh" "$BUILD_DIR" -- "$HERE/differences.sh" "$BUILD_DIR" 2>"${TMPDIR:-/tmp}/hindsight-containers.err"
  status=$?
  cat "${TMPDIR:-/tmp}/hindsight-containers.err" >&2
  ((status == 125)) && { tail -1 "${TMPDIR:-/tmp}/hindsight-containers.err"; exit 77; }
  exit $status
fi

SERVER=${HINDSIGHT_SERVER:-$BUILD_DIR/server/hindsight}
PROG=$BUILD_DIR/test/progs/envinfo
failures=0
check() {  # NAME CONDITION-STATUS: one line per check
  if [ "$2" -eq 0 ]; then echo "ok    $1"; else echo "FAIL  $1"; failures=$((failures + 1)); fi
}
show() { sed 's/^/      /'; }

status=$(grep -E '^(Seccomp|CapEff):' /proc/self/status | tr -s '\t' ' ' | tr '\n' ' ')
echo "      $status"
check "the engine's seccomp profile is in force (Seccomp: 2)" "$(grep -qE '^Seccomp:\s+2$' /proc/self/status; echo $?)"

# Each server starts the program (randomization off, the default), runs it to its end over stdio.
session() {
  gdb -nx -batch -ex "target remote | $1 - $PROG" -ex continue 2>&1
}
ours=$(session "$SERVER")
theirs=$(session /usr/bin/gdbserver)
echo "$ours" | grep -E 'randomization|MAIN' | show
echo "$theirs" | grep -E 'randomization|MAIN' | show
words=$(echo "$theirs" | grep -oE 'Error disabling address space randomization: .*')
check "gdbserver is refused personality(ADDR_NO_RANDOMIZE) here" "$([ -n "$words" ]; echo $?)"
check "the server says it in gdbserver's words: warning: $words" \
  "$(echo "$ours" | grep -qxF "warning: $words"; echo $?)"
check "the program still runs to its end" "$(echo "$ours" | grep -q 'MAIN\[0x' && echo "$ours" | grep -q 'exited normally'; echo $?)"

# perf_event_open, for a software event on this process that perf_event_paranoid 2 allows.
perf=$(python3 -c '
import ctypes, os, struct
attr = struct.pack("IIQQQQQ", 1, 112, 1, 0, 0, 0, 1 << 5) + bytes(112 - 48)  # task-clock, exclude_kernel
libc = ctypes.CDLL(None, use_errno=True)
fd = libc.syscall(298, attr, 0, -1, -1, 0)
print("opened" if fd >= 0 else os.strerror(ctypes.get_errno()))')
echo "perf_event_open: $perf" | show
check "perf_event_open is refused (Operation not permitted)" "$([ "$perf" = "Operation not permitted" ]; echo $?)"
bts=$("$SERVER" --version 2>&1 | grep -E '^  bts ')
echo "$bts" | show
check "--version: BTS cannot record here, why, and the in-process recorder named" \
  "$(echo "$bts" | grep -qE 'no: .*(seccomp|not available on this CPU).*--btrace=inproc'; echo $?)"

# ptrace: allowed by the profile, without CAP_SYS_PTRACE (bit 19); the host's Yama scope, if any.
cap_eff=$(awk '/^CapEff:/ { print $2 }' /proc/self/status)
scope=$(cat /proc/sys/kernel/yama/ptrace_scope 2>/dev/null || echo "none (no Yama)")
echo "      ptrace scope: $scope"
check "no CAP_SYS_PTRACE (attach is to our own user's processes only)" "$(( (0x$cap_eff >> 19) & 1 ))"

exit $((failures > 0))
