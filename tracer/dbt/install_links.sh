#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# install_links.sh CORE_DIR DIR: at `meson install`, DIR (under the prefix, the tools installed
# there already) becomes a VALGRIND_LIB folder: symlinks to each of the core's files. Absolute,
# so that a DESTDIR tree works where it lies (Debian's dh_link makes them relative).
set -eu
core=$1 dir=$2
into=${MESON_INSTALL_DESTDIR_PREFIX:?}/$dir
mkdir -p "$into"
for f in "$core"/*; do
  ln -sfn "$f" "$into/$(basename "$f")"
done
