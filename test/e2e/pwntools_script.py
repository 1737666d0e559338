#!/usr/bin/python3
"""A pwntools script as its users write them, for test_pwntools.cpp. `gdbserver` is whatever
PATH finds (the test puts Hindsight there). Prints what it saw, one `KEY: value` a line.

  pwntools_script.py debug PROG    gdb.debug([PROG, "exit"]): PROG (test/progs/triage_cases)
                                   echoes its stdin and exits 3; GDB goes on to the end.
  pwntools_script.py attach PROG   the server pwntools starts for gdb.attach(PID) on Android,
                                   `gdbserver --multi ... --once --attach localhost:0 PID`
                                   (PROG: test/progs/sleeper), GDB in extended mode, detach.

GDB runs as pwntools runs it without a terminal in its own documentation's tests:
context.terminal is pwntools' gdb_faketerminal.py, which feeds GDB `continue` through a pipe
until the program is gone, then closes it.
"""
import os
import subprocess
import sys
import time

import pwnlib
from pwn import context, gdb, process
from pwnlib.util.misc import which

context.log_level = 'error'
context.terminal = [sys.executable, os.path.join(os.path.dirname(pwnlib.__file__), 'gdb_faketerminal.py')]


def debug(prog):
    io = gdb.debug([prog, 'exit'], gdbscript='continue')
    io.sendline(b'hello from pwntools')
    print('ECHO:', io.recvline_contains(b'hello from pwntools', timeout=30).decode().strip())
    io.shutdown('send')  # EOF: the program exits 3, GDB leaves
    start = time.monotonic()
    print('POLL:', io.poll(block=True))
    print('WAITED: %.1f s' % (time.monotonic() - start))
    print('REST:', io.recvall(timeout=5).decode(errors='replace').replace('\r', '').replace('\n', ' | '))


def attach(prog):
    target = process([prog, '60'])
    target.recvline_contains(b'pid', timeout=10)
    argv = gdb._gdbserver_args(pid=target.pid, which=which)
    print('ARGV:', ' '.join(['gdbserver'] + argv[1:-1] + ['PID']))
    server = process(argv)
    port = gdb._gdbserver_port(server, None)  # reads "Attached; pid = N", "Listening on port N"
    print('PID SAID:', server.pid == target.pid)
    # What gdb.attach puts before the user's script for this server, then a detach.
    out = subprocess.run([gdb.binary(), '-nx', '-batch', '-ex', 'target extended-remote 127.0.0.1:%d' % port,
                          '-ex', 'set detach-on-fork off', '-ex', 'info threads', '-ex', 'detach'],
                         stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
    print('GDB:', (out.stdout + out.stderr).replace('\n', ' | '))
    start = time.monotonic()
    print('POLL:', server.poll(block=True))
    print('WAITED: %.1f s' % (time.monotonic() - start))
    with open('/proc/%d/status' % target.pid) as status:
        print('TRACER:', [line.split()[1] for line in status if line.startswith('TracerPid:')][0])
    print('TARGET RUNS:', target.poll() is None)
    target.kill()


if __name__ == '__main__':
    {'debug': debug, 'attach': attach}[sys.argv[1]](sys.argv[2])
