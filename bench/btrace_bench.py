# GDB script for btrace_bench.sh (and inproc_bench.sh): from $BENCH_START (default bench_start),
# record with $BENCH_RECORD ("btrace", "full", or "none": no recording, the session's own cost)
# and time the `continue` to $BENCH_END (bench_end); then count the recorded instructions.
# $BENCH_CATCH: `catch syscall` those (say "write") for that continue too. $BENCH_BUFFER: GDB's
# btrace buffer in bytes (67108864; the in-process recorder keeps as much between two stops).
import os
import re
import time

import gdb

mode = os.environ["BENCH_RECORD"]
gdb.execute("set pagination off")
gdb.execute("set confirm off")
start = os.environ.get("BENCH_START", "bench_start")
end = os.environ.get("BENCH_END", "bench_end")
gdb.execute("set breakpoint pending on")  # the markers may be in a library not loaded yet
gdb.execute("break " + start)
gdb.execute("continue")
if mode == "btrace":
    gdb.execute("set record btrace bts buffer-size " + os.environ.get("BENCH_BUFFER", "67108864"))
    gdb.execute("record btrace bts")
elif mode == "none":
    pass
else:
    gdb.execute("set record full insn-number-max unlimited")
    gdb.execute("record full")
gdb.execute("break " + end)
if os.environ.get("BENCH_CATCH"):
    gdb.execute("catch syscall " + os.environ["BENCH_CATCH"])
t0 = time.monotonic()
gdb.execute("continue", to_string=True)
elapsed = time.monotonic() - t0
if mode == "none":
    print("BENCH none 0 %.3f 0 0" % elapsed)
    gdb.execute("kill")
    raise SystemExit(0)
info = gdb.execute("info record", to_string=True)
m = re.search(r"Recorded (\d+) instructions", info) or re.search(r"Log contains (\d+) instructions", info)
insns = int(m.group(1)) if m else 0
branches = 0
if mode == "btrace":
    try:
        status = gdb.execute("monitor btrace", to_string=True)
        b = re.search(r"(\d+) recorded", status)
        branches = int(b.group(1)) if b else 0
    except gdb.error:
        pass  # not Hindsight
print("BENCH %s %d %.3f %.0f %d" % (mode, insns, elapsed, insns / elapsed if elapsed > 0 else 0, branches))
gdb.execute("record stop")
gdb.execute("kill")
