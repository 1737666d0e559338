# py_threads.py - four Python threads doing dictionary and string work; once all are done (and
# still alive) the main thread calls os.getppid(), then lets them end: a real interpreter
# workload for history sessions (bench/history_bench.sh).
import os
import sys
import threading

ROUNDS = int(sys.argv[1]) if len(sys.argv) > 1 else 20000
done = threading.Semaphore(0)
leave = threading.Event()


def work(seed):
    table = {}
    for i in range(ROUNDS):
        key = "k%d" % ((i * seed) % 997)
        table[key] = table.get(key, 0) + len(key)
    done.release()
    leave.wait()


threads = [threading.Thread(target=work, args=(n + 3,)) for n in range(4)]
for t in threads:
    t.start()
for t in threads:
    done.acquire()
os.getppid()
leave.set()
for t in threads:
    t.join()
