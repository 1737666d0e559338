#!/usr/bin/env bash
# A short scripted GDB session against hindsight on a bundled program, printed as it happens.
set -euo pipefail
BUILD_DIR=${1:-build}
HINDSIGHT=$BUILD_DIR/server/hindsight
PROG=$BUILD_DIR/test/progs/simple
CALLS=$BUILD_DIR/test/progs/calls

echo "== hindsight demo: GDB 13 drives $PROG through hindsight over stdio (no local copy of the program)"
echo "== gdb -batch -ex 'target remote | hindsight - simple' -ex 'break square' -ex continue -ex bt ..."
echo
gdb -nx -batch -iex 'set debuginfod enabled off' \
  -ex "target remote | $HINDSIGHT - $PROG" \
  -ex 'break square' -ex 'continue' -ex 'bt' -ex 'info registers rip' \
  -ex 'finish' -ex 'delete' -ex 'print square(12)' -ex 'continue' 2>&1
echo
echo "== branch history on this machine: record btrace, run forward, then look back"
echo "== gdb -batch -ex 'break outer' -ex continue -ex 'record btrace' -ex 'break done' -ex continue -ex 'record function-call-history /c' ..."
echo
gdb -nx -batch -iex 'set debuginfod enabled off' \
  -ex "target remote | $HINDSIGHT - $CALLS" \
  -ex 'break outer' -ex 'continue' -ex 'record btrace' -ex 'break done' -ex 'continue' \
  -ex 'info record' -ex 'record function-call-history /c' -ex 'reverse-finish' -ex 'reverse-step' \
  -ex 'record goto end' -ex 'monitor btrace' -ex 'record stop' -ex 'delete' -ex 'continue' 2>&1
echo
echo "== try it yourself:  $HINDSIGHT :1234 $PROG   then   gdb -ex 'target remote :1234'"
