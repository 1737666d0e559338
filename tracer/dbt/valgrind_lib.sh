#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# valgrind_lib.sh CORE_DIR OUT TOOL...: OUT becomes a VALGRIND_LIB directory, the core's files
# (symlinks into CORE_DIR) and the TOOLs (one per platform) beside them.
set -eu
core=$1 out=$2
shift 2
rm -rf "$out"
mkdir -p "$out"
for f in "$core"/*; do
  ln -s "$f" "$out/$(basename "$f")"
done
for tool in "$@"; do
  ln -sf "$(cd "$(dirname "$tool")" && pwd)/$(basename "$tool")" "$out/$(basename "$tool")"
done
