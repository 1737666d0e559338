# GDB script for btrace_threads_bench.sh: at bench_start, with every thread alive, note the
# server's resident memory, `record btrace` (every thread), run to bench_end (each thread has
# filled its ring), note it again, and what the rings hold (monitor btrace).
import os
import re
import time

import gdb


def server_memory():
    # The server is the inferior's parent (it forked and exec'd it).
    pid = gdb.selected_inferior().pid
    with open("/proc/%d/status" % pid) as f:
        ppid = int(re.search(r"PPid:\s+(\d+)", f.read()).group(1))
    with open("/proc/%d/status" % ppid) as f:
        text = f.read()
    kib = lambda key: int(re.search(key + r":\s+(\d+) kB", text).group(1))
    return kib("VmRSS"), kib("VmHWM")


gdb.execute("set pagination off")
gdb.execute("set confirm off")
gdb.execute("break bench_start")
gdb.execute("continue")
rss_before, _ = server_memory()
gdb.execute("record btrace bts")
gdb.execute("break bench_end")
t0 = time.monotonic()
gdb.execute("continue", to_string=True)
elapsed = time.monotonic() - t0
rss_after, hwm = server_memory()
status = gdb.execute("monitor btrace", to_string=True)
rows = re.findall(r"thread \d+: \w+, (\d+) of (\d+) branches kept, (\d+) recorded", status)
traced = len(rows)
kept = sum(int(r[0]) for r in rows)
capacity = max((int(r[1]) for r in rows), default=0)
print("BENCH %d %d %d %d %d %d %.3f" % (traced, kept, capacity, rss_before, rss_after, hwm, elapsed))
gdb.execute("kill")
