# The Python program of the branch-trace figure: sort N numbers (default 3000) with a key
# function. os.getppid() and os.getpgrp() call libc's getppid and getpgrp right before and
# after the sort: the GDB script records between breakpoints on them. Prints the sort's own
# native time in seconds.
import os
import random
import sys
import time

n = int(sys.argv[1]) if len(sys.argv) > 1 else 3000
random.seed(1)
data = [random.random() for _ in range(n)]
os.getppid()
t0 = time.perf_counter()
result = sorted(data, key=lambda x: -x)
elapsed = time.perf_counter() - t0
os.getpgrp()
print("sorted %d in %.6f s" % (len(result), elapsed))
