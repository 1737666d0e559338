#!/usr/bin/env bash
# test/clients/run.sh - runs a command with the GDB, gdbserver and LLDB of a newer Debian release:
# the client lanes. A lane is a Debian root made by debootstrap (minbase) and apt from the archive
# this machine's apt already uses, cached outside the checkout; its clients run on this machine's
# files (checkout, build, test programs at the same paths) with the root's own dynamic loader and
# libraries, so nothing is chrooted or mounted. Lanes:
#   trixie  Debian 13: GDB 16, gdbserver 16, LLDB 19
#   sid     Debian unstable: GDB 18, gdbserver 18, LLDB 21 (what sid has on the day it is made)
# The command runs with the lane's wrappers first in PATH (gdb, gdbserver, lldb) and
# HINDSIGHT_GDB / HINDSIGHT_LLDB naming them (what the e2e suite drives), plus
# HINDSIGHT_CLIENT_ROOT (the root: its gdb-source tarball is usr/src/gdb.tar.*). Exit statuses:
#   125  the lane cannot be prepared here (no debootstrap, no network to the archive, not root),
#        said on stderr
#   else the command's
#
#   test/clients/run.sh LANE [--] CMD [ARGS...]
#   test/clients/run.sh LANE --prepare        prepare (or check) the lane, print its versions
#   test/clients/run.sh LANE --refresh        make the root again from the archive
# Environment: HINDSIGHT_CLIENTS_CACHE (~/.cache/hindsight-clients), HINDSIGHT_CLIENTS_MIRROR (the
# first Debian URI in apt's sources, else http://deb.debian.org/debian).
set -u
CACHE=${HINDSIGHT_CLIENTS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/hindsight-clients}
PACKAGES=(gdb gdbserver lldb gdb-source)
# The wrappers run these, with the root's loader and libraries.
CLIENTS=(gdb gdbserver lldb lldb-server)

cannot() { echo "clients: $*" >&2; exit 125; }
say() { echo "clients: $*" >&2; }

lane=${1:-}
shift || true
case $lane in
  trixie | sid) ;;
  *) cannot "no lane '$lane' (usage: test/clients/run.sh trixie|sid [--prepare|--refresh|[--] CMD...])" ;;
esac
ROOT=$CACHE/$lane
READY=$ROOT/.hindsight-ready

source "$(dirname "${BASH_SOURCE[0]}")/../scripts/debian_mirror.sh"

# One wrapper per client: the root's loader with the root's library folders, the root's Python.
write_wrappers() {
  local bin=$ROOT/hindsight-bin libdirs name target
  mkdir -p "$bin"
  libdirs="$ROOT/usr/lib/x86_64-linux-gnu:$ROOT/lib/x86_64-linux-gnu"
  for dir in "$ROOT"/usr/lib/llvm-*/lib; do
    [[ -d $dir ]] && libdirs="$libdirs:$dir"
  done
  for name in "${CLIENTS[@]}"; do
    target=$(readlink -f "$ROOT/usr/bin/$name") || continue
    [[ -x $target ]] || continue
    cat >"$bin/$name" <<EOF
#!/bin/sh
# $name of the $lane client lane (test/clients/run.sh): the root's binary, loader and libraries.
PYTHONHOME=$ROOT/usr exec $ROOT/lib64/ld-linux-x86-64.so.2 --library-path $libdirs $target "\$@"
EOF
    chmod +x "$bin/$name"
  done
}

versions() {
  local bin=$ROOT/hindsight-bin
  echo "$lane: $("$bin/gdb" --version | head -1); $("$bin/gdbserver" --version | head -1); $("$bin/lldb" --version | head -1)"
}

prepare() {
  [[ $(id -u) == 0 ]] || cannot "making a Debian root needs root (debootstrap, apt in a chroot)"
  command -v debootstrap >/dev/null || cannot "debootstrap not found: install it (scripts/setup.sh --tests does)"
  local url work
  url=$(debian_mirror)
  work=$ROOT.new
  rm -rf "$work"
  mkdir -p "$CACHE"
  say "making the $lane root from $url (debootstrap minbase, then apt: ${PACKAGES[*]})"
  if ! debootstrap --variant=minbase "$lane" "$work" "$url" >"$CACHE/$lane-debootstrap.log" 2>&1; then
    rm -rf "$work"
    cannot "debootstrap $lane from $url failed (no network to the archive?): $(tail -1 "$CACHE/$lane-debootstrap.log")"
  fi
  # A root's apt needs /proc only for a few maintainer scripts; sid's Release can be past its
  # Valid-Until date on a mirror that lags.
  if ! chroot "$work" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive \
      sh -c "apt-get -qq -o Acquire::Check-Valid-Until=false update &&
             apt-get install -y -qq --no-install-recommends ${PACKAGES[*]}" >"$CACHE/$lane-apt.log" 2>&1; then
    rm -rf "$work"
    cannot "apt-get install ${PACKAGES[*]} in the $lane root failed: $(tail -1 "$CACHE/$lane-apt.log")"
  fi
  rm -rf "$ROOT"
  mv "$work" "$ROOT"
  write_wrappers
  versions >"$READY" || { rm -f "$READY"; cannot "the $lane clients do not run: $(versions 2>&1 | tail -1)"; }
  say "ready: $(cat "$READY")"
}

# One preparation at a time per cache (two test runs may share it).
mkdir -p "$(dirname "$CACHE")"
exec 9>>"$CACHE.lock"
flock 9
case ${1:-} in
  --refresh) rm -f "$READY"; prepare; cat "$READY"; exit 0 ;;
  --prepare) [[ -f $READY ]] || prepare; cat "$READY"; exit 0 ;;
  --) shift ;;
esac
[[ -f $READY ]] || prepare
flock -u 9
[[ $# -gt 0 ]] || cannot "no command (usage: test/clients/run.sh LANE [--] CMD [ARGS...])"

export PATH=$ROOT/hindsight-bin:$PATH
export HINDSIGHT_GDB=$ROOT/hindsight-bin/gdb HINDSIGHT_LLDB=$ROOT/hindsight-bin/lldb HINDSIGHT_CLIENT_ROOT=$ROOT
exec "$@"
