# Sourced by GDB (-x) from bench.sh, after `target remote`. Prints KEY=VALUE lines.
#   BENCH_MODE=start       break main, continue, print the wall-clock time (T_MAIN)
#   BENCH_MODE=throughput  dump the 64 MiB buffer (MEM_MIBS), then BENCH_HITS continues
#                          from hit to hit of a breakpoint (BP_HITS_PER_S), then stepi
#                          BENCH_STEPS times in spin() (STEPI_PER_S), then `next` BENCH_NEXTS
#                          times in spin()'s two-line loop: range stepping (NEXT_PER_S), and
#                          GDB's own CPU time per `next` (NEXT_GDB_CPU_US: no server is faster
#                          than 1e6 / that lines per second)
#   BENCH_MODE=cond        at ready(), `break bump if sink == S` true at the BENCH_COND_HITS-th
#                          call, evaluated where BENCH_COND_EVAL says (target|host); one
#                          continue to it (COND_EVALS_PER_S)
#   BENCH_MODE=trace       at ready(), a tracepoint on bump() collecting `sink`, tstart, and one
#                          continue over its 100000 hits to spin(); tracepoint hits collected
#                          per second (TRACE_HITS_PER_S), the frames checked (all 100000)
#   BENCH_MODE=ftrace      the same with a fast tracepoint (`ftrace`: the server's in-process
#                          agent collects, the program preloading it)
#   BENCH_MODE=threads     threads_target: at ready(), `info threads` + `thread apply all bt`
#                          (THREADS_BT_MS); then BENCH_ROUNDS continues to tick(), each one
#                          resuming and stopping every thread (RESUME_STOP_MS per round)
import os
import time

import gdb

mode = os.environ.get("BENCH_MODE", "start")
if mode == "threads":
    rounds = int(os.environ.get("BENCH_ROUNDS", "20"))
    gdb.execute("break ready", to_string=True)
    gdb.execute("continue", to_string=True)
    t0 = time.time()
    listing = gdb.execute("info threads", to_string=True)
    bts = gdb.execute("thread apply all bt", to_string=True)
    t1 = time.time()
    want = int(os.environ.get("BENCH_THREADS", "1000")) + 1
    n_list = sum(1 for line in listing.splitlines() if " Thread " in line)
    if n_list != want or bts.count("in blocked (") != want - 1:
        print("THREADS_ERROR=listed %d threads, %d blocked backtraces" % (n_list, bts.count("in blocked (")))
    else:
        print("THREADS_BT_MS=%.0f" % ((t1 - t0) * 1000))
    gdb.execute("break tick", to_string=True)
    t0 = time.time()
    for _ in range(rounds):
        gdb.execute("continue", to_string=True)
    t1 = time.time()
    print("RESUME_STOP_MS=%.1f" % ((t1 - t0) * 1000 / rounds))
    gdb.execute("kill", to_string=True)
elif mode == "cond":
    hits = int(os.environ.get("BENCH_COND_HITS", "20000"))
    gdb.execute("set breakpoint condition-evaluation %s" % os.environ.get("BENCH_COND_EVAL", "target"), to_string=True)
    gdb.execute("break ready", to_string=True)
    gdb.execute("continue", to_string=True)
    gdb.execute("delete", to_string=True)
    start = int(gdb.parse_and_eval("sink"))
    gdb.execute("break bump if sink == %d" % (start + hits - 1), to_string=True)
    t0 = time.time()
    gdb.execute("continue", to_string=True)
    t1 = time.time()
    if int(gdb.parse_and_eval("sink")) != start + hits - 1:
        print("COND_ERROR=stopped with sink %d, expected %d" % (int(gdb.parse_and_eval("sink")), start + hits - 1))
    else:
        print("COND_EVALS_PER_S=%.0f" % (hits / (t1 - t0)))
    gdb.execute("kill", to_string=True)
elif mode in ("trace", "ftrace"):
    gdb.execute("break ready", to_string=True)
    gdb.execute("continue", to_string=True)
    gdb.execute("delete", to_string=True)
    # (GDB reads a tracepoint's actions from the lines after `actions`: a script it sources.)
    script = os.environ["BENCH_DUMP"] + ".gdb"
    with open(script, "w") as f:
        f.write("%s bump\nactions\ncollect sink\nend\n" % mode)
    gdb.execute("source " + script, to_string=True)
    os.unlink(script)
    gdb.execute("break spin", to_string=True)
    gdb.execute("tstart", to_string=True)
    t0 = time.time()
    gdb.execute("continue", to_string=True)
    t1 = time.time()
    gdb.execute("tstop", to_string=True)
    status = gdb.execute("tstatus", to_string=True)
    if "Collected 100000 trace frames" not in status:
        print("TRACE_ERROR=%s" % " ".join(status.split()))
    else:
        print("TRACE_HITS_PER_S=%.0f" % (100000 / (t1 - t0)))
    gdb.execute("kill", to_string=True)
elif mode == "start":
    gdb.execute("break main", to_string=True)
    gdb.execute("continue", to_string=True)
    print("T_MAIN=%.6f" % time.time())
else:
    dump = os.environ["BENCH_DUMP"]
    steps = int(os.environ.get("BENCH_STEPS", "2000"))
    gdb.execute("break ready", to_string=True)
    gdb.execute("continue", to_string=True)
    addr = int(gdb.parse_and_eval("(unsigned long) buffer"))
    size = int(gdb.parse_and_eval("bench_size"))
    t0 = time.time()
    gdb.execute("dump binary memory %s %d %d" % (dump, addr, addr + size), to_string=True)
    t1 = time.time()
    with open(dump, "rb") as f:
        data = f.read()
    if len(data) != size or data.count(b"\x5a") != size:
        print("MEM_ERROR=dump has %d bytes, expected %d bytes of 0x5a" % (len(data), size))
    else:
        print("MEM_MIBS=%.2f" % (size / (1 << 20) / (t1 - t0)))
    os.unlink(dump)
    hits = int(os.environ.get("BENCH_HITS", "500"))
    gdb.execute("break bump", to_string=True)
    gdb.execute("continue", to_string=True)
    first = int(gdb.parse_and_eval("sink"))
    t0 = time.time()
    for _ in range(hits):
        gdb.execute("continue", to_string=True)
    t1 = time.time()
    if int(gdb.parse_and_eval("sink")) != first + hits:
        print("BP_ERROR=%d hits counted, expected %d" % (int(gdb.parse_and_eval("sink")) - first, hits))
    else:
        print("BP_HITS_PER_S=%.0f" % (hits / (t1 - t0)))
    gdb.execute("delete", to_string=True)
    gdb.execute("break spin", to_string=True)
    gdb.execute("continue", to_string=True)
    pcs = set()
    t0 = time.time()
    for _ in range(steps):
        gdb.execute("stepi", to_string=True)
        if len(pcs) < 4:
            pcs.add(int(gdb.parse_and_eval("$pc")))
    t1 = time.time()
    if len(pcs) < 2:
        print("STEPI_ERROR=pc did not move")
    else:
        print("STEPI_PER_S=%.0f" % (steps / (t1 - t0)))
    nexts = int(os.environ.get("BENCH_NEXTS", "1000"))
    gdb.execute("next", to_string=True)
    lines = set()
    t0 = time.time()
    cpu0 = time.process_time()  # GDB's own CPU (not the server's, even as its child)
    for _ in range(nexts):
        gdb.execute("next", to_string=True)
        if len(lines) < 3:
            lines.add(gdb.selected_frame().find_sal().line)
    t1 = time.time()
    cpu1 = time.process_time()
    if len(lines) < 2:
        print("NEXT_ERROR=next did not move from line %s" % lines)
    else:
        print("NEXT_PER_S=%.0f" % (nexts / (t1 - t0)))
        print("NEXT_GDB_CPU_US=%.0f" % ((cpu1 - cpu0) * 1e6 / nexts))
