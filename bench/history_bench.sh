#!/usr/bin/env bash
# history_bench.sh - a history session on a real program, as a user has it: python3 with four
# threads (progs/py_threads.py) under the dbt recorder, `record btrace` from the first
# pthread_create to os.getppid(), then `info record` in every thread. Seconds for the recording (continue) and
# for `info record` (GDB decoding what it reads), with GDB's default buffer and with 12 MiB;
# then a shorter run ($SOFT_ROUNDS rounds) under soft, with the server's progress lines.
#
#   bench/history_bench.sh [PATH_TO_HINDSIGHT]    Environment: ROUNDS (20000), SOFT_ROUNDS (80)
set -u
source "$(dirname "$0")/common.sh"
ROUNDS=${ROUNDS:-20000}
SOFT_ROUNDS=${SOFT_ROUNDS:-80}
PY=/usr/bin/python3
WORK=$(mktemp -d /tmp/hindsight-history-bench.XXXXXX)
trap 'rm -rf "$WORK"' EXIT

session() {  # LABEL ROUNDS GDB_COMMAND SERVER_FLAGS...: one GDB session (the command before `record btrace`), timed parts printed
  local label=$1 rounds=$2 setting=$3
  shift 3
  local port
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  "$HINDSIGHT" --once "$@" ":$port" "$PY" "$HERE/progs/py_threads.py" "$rounds" >/dev/null 2>"$WORK/server.err" &
  local server=$!
  sleep 1
  timeout 600 "$GDB" -nx -batch -iex "set debuginfod enabled off" -ex "target remote :$port" \
    -ex "break pthread_create" -ex "continue" -ex "delete" -ex "$setting" -ex "record btrace" \
    -ex "break getppid" \
    -ex "python import time; t0 = time.time()" -ex "continue" \
    -ex "python t1 = time.time()" -ex "thread apply all info record" -ex "python t2 = time.time()" \
    -ex "python print('TIMES %.2f %.2f' % (t1 - t0, t2 - t1))" -ex "kill" >"$WORK/gdb.out" 2>&1
  wait "$server" 2>/dev/null
  local times insns
  times=$(grep '^TIMES' "$WORK/gdb.out" | awk '{print $2, $3}')
  insns=$(grep -o 'Recorded [0-9]* instructions' "$WORK/gdb.out" | awk '{ n += $2 } END { print n + 0 }')
  printf '%-44s continue %6s s   info record %6s s   (%s instructions in all threads)\n' "$label" "${times% *}" \
    "${times#* }" "$insns"
}

echo "python3, 4 threads: record btrace from pthread_create to getppid"
session "dbt, $ROUNDS rounds, default buffer (64 KiB)" "$ROUNDS" "echo" --btrace=dbt
session "dbt, $ROUNDS rounds, buffer-size 12 MiB" "$ROUNDS" "set record btrace bts buffer-size 12582912" --btrace=dbt
session "soft, $SOFT_ROUNDS rounds, default buffer" "$SOFT_ROUNDS" "echo" --btrace=soft
grep '^hindsight: ' "$WORK/server.err" | head -3
