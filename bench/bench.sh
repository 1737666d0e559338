#!/usr/bin/env bash
# bench.sh - Hindsight and GNU gdbserver side by side, same machine, same run.
#
#   bench/bench.sh [PATH_TO_HINDSIGHT]      (default: build/server/hindsight)
#
# (a) session start to main: server start + GDB connect (no local file) + `break main` +
#     `continue` until stopped at main; median of $RUNS runs.
# (b) stepi round trips per second: $STEPS `stepi` in a call-free loop, timed inside GDB; and
#     `next` lines per second: $NEXTS `next` in that loop of two short lines (range stepping:
#     vCont;r, the server steps inside each line), with GDB's own CPU time per `next` (the
#     part no server can save: 1e6 / it is the most lines per second any server could give).
# (c) memory read: `dump binary memory` of a 64 MiB touched heap buffer, MiB/s.
# (e) breakpoint hits per second: $HITS continues from hit to hit of a breakpoint (each one a
#     stop, GDB's step over its breakpoint, and a resume).
# (b), (c) and (e): median of $THRU_RUNS sessions. A server that is missing gets "n/a".
# (f) conditional breakpoint evaluations per second: `break bump if sink == N`, false until the
#     $COND_HITS-th call, evaluated by the server (condition-evaluation target) and by GDB
#     (host, $COND_HOST_HITS calls); one continue, median of $THRU_RUNS sessions.
# (g) tracepoint hits collected per second: a tracepoint on bump() collecting a global, one
#     continue over its 100000 hits (the program runs on at each; the server collects);
#     median of $THRU_RUNS sessions.
# (h) fast tracepoint hits collected per second: (g) with `ftrace`, the program (built -no-pie:
#     gdbserver's agent cannot reach a PIE's code from its jump pads) preloading each server's
#     in-process agent: Hindsight's libhindsight-agent.so, gdbserver's libinproctrace.so.
# (d) 1000 threads (bench/progs/threads_target.c): `info threads` + `thread apply all bt`
#     at a breakpoint, and one `continue` to a breakpoint (resume and stop all 1001 threads,
#     mean of $ROUNDS); medians of $THREAD_RUNS sessions.
#
# Environment: RUNS (5), THRU_RUNS (3), STEPS (2000), GDB (/usr/bin/gdb), GDBSERVER_AGENT
#              (/usr/lib/libinproctrace.so),
#              GDBSERVER (/usr/bin/gdbserver), THREADS (1000), THREAD_RUNS (3), ROUNDS (20).
set -u
source "$(dirname "$0")/common.sh"
RUNS=${RUNS:-5}
THRU_RUNS=${THRU_RUNS:-3}
STEPS=${STEPS:-2000}
NEXTS=${NEXTS:-1000}
COND_HITS=${COND_HITS:-20000}
COND_HOST_HITS=${COND_HOST_HITS:-2000}
HITS=${HITS:-500}
THREADS=${THREADS:-1000}
THREAD_RUNS=${THREAD_RUNS:-3}
ROUNDS=${ROUNDS:-20}


WORK=$(mktemp -d /tmp/hindsight-bench.XXXXXX)
SERVER_PID=
cleanup () {
  [ -n "$SERVER_PID" ] && kill -9 "$SERVER_PID" 2>/dev/null && wait "$SERVER_PID" 2>/dev/null
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

${CC:-cc} -g -O0 -o "$WORK/bench_target" "$HERE/progs/bench_target.c" || exit 1
${CC:-cc} -g -O0 -pthread -o "$WORK/threads_target" "$HERE/progs/threads_target.c" || exit 1
${CC:-cc} -g -O0 -no-pie -o "$WORK/bench_target_nopie" "$HERE/progs/bench_target.c" || exit 1
PROG=$WORK/bench_target
SERVER_OPTIONS=()  # (before the port: gdbserver's options go there)

free_port () {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

now () { date +%s.%N; }

# start_server SERVER PORT [PROGRAM ARGS...]: start it on PROG (default), wait (5 s at most)
# until it listens.
start_server () {
  local server=$1 port=$2
  shift 2
  [ $# -gt 0 ] || set -- "$PROG"
  : > "$WORK/server.err"
  "$server" --once "${SERVER_OPTIONS[@]}" ":$port" "$@" > "$WORK/server.out" 2> "$WORK/server.err" &
  SERVER_PID=$!
  for _ in $(seq 1 1000); do
    grep -q "Listening on port" "$WORK/server.err" && return 0
    kill -0 "$SERVER_PID" 2>/dev/null || break
    sleep 0.005
  done
  echo "bench.sh: $server did not start:" >&2
  cat "$WORK/server.err" >&2
  return 1
}

# stop_server: up to 5 s to exit by itself (--once), then killed.
stop_server () {
  for _ in $(seq 1 100); do
    kill -0 "$SERVER_PID" 2>/dev/null || break
    sleep 0.05
  done
  kill -9 "$SERVER_PID" 2>/dev/null
  wait "$SERVER_PID" 2>/dev/null
  SERVER_PID=
}

# gdb_session MODE PORT: GDB in batch mode running gdb_bench.py; output on stdout.
gdb_session () {
  BENCH_MODE=$1 BENCH_STEPS=$STEPS BENCH_NEXTS=$NEXTS BENCH_HITS=$HITS BENCH_DUMP=$WORK/dump.bin BENCH_THREADS=$THREADS \
    BENCH_ROUNDS=$ROUNDS timeout 300 "$GDB" -nx -batch \
    -iex 'set debuginfod enabled off' -ex "target remote 127.0.0.1:$2" \
    -x "$HERE/gdb_bench.py" 2>&1
}

median () { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "n/a"; else if (NR % 2) print v[(NR + 1) / 2]; else printf "%.2f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# value KEY < gdb output: the KEY=VALUE printed by gdb_bench.py; errors go to stderr.
value () {
  local out; out=$(cat)
  if grep -q "_ERROR=" <<< "$out"; then
    grep "_ERROR=" <<< "$out" >&2
  fi
  grep -m1 "^$1=" <<< "$out" | cut -d= -f2
}

# measure SERVER: prints "START_MS STEPI_PER_S MEM_MIBS BP_HITS_PER_S NEXT_PER_S NEXT_GDB_CPU_US"
# (medians), n/a where it failed.
measure () {
  local server=$1 port t0 t1 out
  local starts=() stepis=() mems=() hits=() nexts=() gdb_cpus=()
  for _ in $(seq 1 "$RUNS"); do
    port=$(free_port)
    t0=$(now)
    start_server "$server" "$port" || continue
    out=$(gdb_session start "$port")
    stop_server
    t1=$(value T_MAIN <<< "$out")
    if [ -n "$t1" ]; then
      starts+=("$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", (b - a) * 1000 }')")
    else
      echo "bench.sh: $server: no stop at main:" >&2; tail -5 <<< "$out" >&2
    fi
  done
  for _ in $(seq 1 "$THRU_RUNS"); do
    port=$(free_port)
    start_server "$server" "$port" || continue
    out=$(gdb_session throughput "$port")
    stop_server
    local s m
    s=$(value STEPI_PER_S <<< "$out"); [ -n "$s" ] && stepis+=("$s")
    m=$(value MEM_MIBS <<< "$out"); [ -n "$m" ] && mems+=("$m")
    local h; h=$(value BP_HITS_PER_S <<< "$out"); [ -n "$h" ] && hits+=("$h")
    local n; n=$(value NEXT_PER_S <<< "$out"); [ -n "$n" ] && nexts+=("$n")
    local u; u=$(value NEXT_GDB_CPU_US <<< "$out"); [ -n "$u" ] && gdb_cpus+=("$u")
    if [ -z "$s" ] || [ -z "$m" ]; then
      echo "bench.sh: $server: throughput session failed:" >&2; tail -5 <<< "$out" >&2
    fi
  done
  printf '%s %s %s %s %s %s\n' \
    "$(printf '%s\n' "${starts[@]}" | grep . | median)" \
    "$(printf '%s\n' "${stepis[@]}" | grep . | median)" \
    "$(printf '%s\n' "${mems[@]}" | grep . | median)" \
    "$(printf '%s\n' "${hits[@]}" | grep . | median)" \
    "$(printf '%s\n' "${nexts[@]}" | grep . | median)" \
    "$(printf '%s\n' "${gdb_cpus[@]}" | grep . | median)"
}

# measure_threads SERVER: prints "THREADS_BT_MS RESUME_STOP_MS" (medians), n/a where it failed.
measure_threads () {
  local server=$1 port out b r
  local bts=() rounds=()
  for _ in $(seq 1 "$THREAD_RUNS"); do
    port=$(free_port)
    start_server "$server" "$port" "$WORK/threads_target" "$THREADS" || continue
    out=$(gdb_session threads "$port")
    stop_server
    b=$(value THREADS_BT_MS <<< "$out"); [ -n "$b" ] && bts+=("$b")
    r=$(value RESUME_STOP_MS <<< "$out"); [ -n "$r" ] && rounds+=("$r")
    if [ -z "$b" ] || [ -z "$r" ]; then
      echo "bench.sh: $server: threads session failed:" >&2; tail -5 <<< "$out" >&2
    fi
  done
  printf '%s %s\n' \
    "$(printf '%s\n' "${bts[@]}" | grep . | median)" \
    "$(printf '%s\n' "${rounds[@]}" | grep . | median)"
}

# The two servers take turns, one run of each measurement at a time, so that a slow moment of
# the machine lands on both columns alike; the table shows the medians.
declare -A vals
add () { [ -n "$2" ] && [ "$2" != n/a ] && vals[$1]+="$2"$'\n'; }
rounds=$(( RUNS > THRU_RUNS ? RUNS : THRU_RUNS ))
rounds=$(( rounds > THREAD_RUNS ? rounds : THREAD_RUNS ))
have_hindsight=1
if [ ! -x "$HINDSIGHT" ]; then
  echo "bench.sh: no hindsight at $HINDSIGHT; its column is n/a" >&2
  have_hindsight=0
fi
for i in $(seq 1 "$rounds"); do
  for who in h g; do
    server=$GDBSERVER
    if [ "$who" = h ]; then
      [ "$have_hindsight" = 1 ] || continue
      server=$HINDSIGHT
    fi
    read -r a b c f n u <<< "$(RUNS=$(( i <= RUNS ? 1 : 0 )) THRU_RUNS=$(( i <= THRU_RUNS ? 1 : 0 )) measure "$server")"
    add "${who}_start" "$a"; add "${who}_stepi" "$b"; add "${who}_mem" "$c"; add "${who}_hits" "$f"; add "${who}_next" "$n"; add "${who}_gdbcpu" "$u"
    if [ "$i" -le "$THREAD_RUNS" ]; then
      read -r d e <<< "$(THREAD_RUNS=1 measure_threads "$server")"
      add "${who}_tbt" "$d"; add "${who}_round" "$e"
    fi
  done
done
med () { printf '%s' "${vals[$1]:-}" | grep . | median; }
h_start=$(med h_start); h_stepi=$(med h_stepi); h_mem=$(med h_mem); h_tbt=$(med h_tbt); h_round=$(med h_round); h_hits=$(med h_hits); h_next=$(med h_next); h_gdbcpu=$(med h_gdbcpu)
g_start=$(med g_start); g_stepi=$(med g_stepi); g_mem=$(med g_mem); g_tbt=$(med g_tbt); g_round=$(med g_round); g_hits=$(med g_hits); g_next=$(med g_next); g_gdbcpu=$(med g_gdbcpu)

echo
echo "$(uname -r), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) cpus"
echo "runs: start $RUNS, throughput $THRU_RUNS (medians); stepi x $STEPS; memory 64 MiB"
printf '%-38s %14s %14s\n' "metric" "hindsight" "gdbserver"
printf '%-38s %14s %14s\n' "session start to main (ms)" "$h_start" "$g_start"
printf '%-38s %14s %14s\n' "stepi round trips per second" "$h_stepi" "$g_stepi"
printf '%-38s %14s %14s\n' "next lines per second (range steps)" "$h_next" "$g_next"
printf '%-38s %14s %14s\n' "  GDB's own CPU per next (us)" "$h_gdbcpu" "$g_gdbcpu"
printf '%-38s %14s %14s\n' "memory read, dump 64 MiB (MiB/s)" "$h_mem" "$g_mem"
printf '%-38s %14s %14s\n' "breakpoint hits per second" "$h_hits" "$g_hits"
printf '%-38s %14s %14s\n' "$THREADS threads: info threads + bt (ms)" "$h_tbt" "$g_tbt"
printf '%-38s %14s %14s\n' "$THREADS threads: continue to stop (ms)" "$h_round" "$g_round"

# measure_cond SERVER EVAL HITS: conditional breakpoint evaluations per second (median).
measure_cond () {
  local server=$1 eval=$2 hits=$3 port out c vals=()
  for _ in $(seq 1 "$THRU_RUNS"); do
    port=$(free_port)
    start_server "$server" "$port" || continue
    out=$(BENCH_COND_EVAL=$eval BENCH_COND_HITS=$hits gdb_session cond "$port")
    stop_server
    c=$(value COND_EVALS_PER_S <<< "$out"); [ -n "$c" ] && vals+=("$c")
  done
  printf '%s\n' "${vals[@]}" | grep . | median
}
h_cond_t=n/a; h_cond_h=n/a
if [ "$have_hindsight" = 1 ]; then
  h_cond_t=$(measure_cond "$HINDSIGHT" target "$COND_HITS"); h_cond_h=$(measure_cond "$HINDSIGHT" host "$COND_HOST_HITS")
fi
g_cond_t=$(measure_cond "$GDBSERVER" target "$COND_HITS"); g_cond_h=$(measure_cond "$GDBSERVER" host "$COND_HOST_HITS")
printf '%-38s %14s %14s\n' "cond. breakpoint evals/s (target)" "$h_cond_t" "$g_cond_t"
printf '%-38s %14s %14s\n' "cond. breakpoint evals/s (GDB host)" "$h_cond_h" "$g_cond_h"

# measure_trace SERVER: tracepoint hits collected per second (median).
measure_trace () {
  local server=$1 port out c vals=()
  for _ in $(seq 1 "$THRU_RUNS"); do
    port=$(free_port)
    start_server "$server" "$port" || continue
    out=$(gdb_session trace "$port")
    stop_server
    c=$(value TRACE_HITS_PER_S <<< "$out"); [ -n "$c" ] && vals+=("$c")
  done
  printf '%s\n' "${vals[@]}" | grep . | median
}
h_trace=n/a
if [ "$have_hindsight" = 1 ]; then
  h_trace=$(measure_trace "$HINDSIGHT")
fi
g_trace=$(measure_trace "$GDBSERVER")
printf '%-38s %14s %14s\n' "tracepoint hits collected per second" "$h_trace" "$g_trace"

# measure_ftrace SERVER AGENT: fast tracepoint hits collected per second (median).
measure_ftrace () {
  local server=$1 agent=$2 port out c vals=()
  [ -f "$agent" ] || { echo n/a; return; }
  SERVER_OPTIONS=(--wrapper env "LD_PRELOAD=$agent" --)
  for _ in $(seq 1 "$THRU_RUNS"); do
    port=$(free_port)
    start_server "$server" "$port" "$WORK/bench_target_nopie" || continue
    out=$(gdb_session ftrace "$port")
    stop_server
    c=$(value TRACE_HITS_PER_S <<< "$out"); [ -n "$c" ] && vals+=("$c")
  done
  SERVER_OPTIONS=()
  printf '%s\n' "${vals[@]}" | grep . | median
}
h_ftrace=n/a
if [ "$have_hindsight" = 1 ]; then
  h_ftrace=$(measure_ftrace "$HINDSIGHT" "$(dirname "$HINDSIGHT")/../tracer/inprocess/libhindsight-agent.so")
fi
g_ftrace=$(measure_ftrace "$GDBSERVER" "${GDBSERVER_AGENT:-/usr/lib/libinproctrace.so}")
printf '%-38s %14s %14s\n' "fast tracepoint hits per second" "$h_ftrace" "$g_ftrace"

# Branch-trace recording speed (SoftStep where there is no BTS) beside GDB's `record full`.
echo
bash "$HERE/btrace_bench.sh" "$HINDSIGHT"
