#!/usr/bin/env bash
# ./run.sh            installs what is missing, builds, and runs a short demo session
# ./run.sh ARGS...    the same, then runs `hindsight ARGS...` (for example: ./run.sh :1234 ./prog)
set -euo pipefail
cd "$(dirname "$0")"
BUILD_DIR=${BUILD_DIR:-$PWD/build}
scripts/setup.sh "$BUILD_DIR"
if (($# > 0)); then
  exec "$BUILD_DIR/server/hindsight" "$@"
fi
exec scripts/demo.sh "$BUILD_DIR"
