#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# valgrind_lib.sh CORE_DIR TOOL OUT: OUT becomes a VALGRIND_LIB directory, the core's files
# (symlinks into CORE_DIR) and TOOL beside them.
set -eu
core=$1 tool=$2 out=$3
rm -rf "$out"
mkdir -p "$out"
for f in "$core"/*; do
  ln -s "$f" "$out/$(basename "$f")"
done
ln -sf "$(cd "$(dirname "$tool")" && pwd)/$(basename "$tool")" "$out/$(basename "$tool")"
