# Sourced by the bench scripts: where things are, and GNU gdbserver installed for the
# side-by-side figures. $1 of the calling script may name the hindsight binary.
HERE=$(cd "$(dirname "${BASH_SOURCE[1]}")" && pwd)
ROOT=$(dirname "$HERE")
HINDSIGHT=${1:-$ROOT/build/server/hindsight}
GDB=${GDB:-/usr/bin/gdb}
GDBSERVER=${GDBSERVER:-/usr/bin/gdbserver}

if [ ! -x "$GDBSERVER" ]; then
  "$ROOT/scripts/setup.sh" --install gdbserver
fi
[ -x "$GDB" ] || { echo "bench: $GDB not found" >&2; exit 1; }
