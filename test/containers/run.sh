#!/usr/bin/env bash
# test/containers/run.sh - runs a command inside a container, as most CI runs: Debian 12's podman
# with its default seccomp profile and capabilities, on a Debian 12 root made by debootstrap
# (minbase) with GDB, gdbserver, Valgrind, Python and the packages of the libraries the build's
# programs load, made once and cached outside the checkout. The checkout and the build tree are
# mounted read-only at their own paths, so the host's build runs inside as it is: nothing is
# built in the container. The root is read-only too (/tmp, /var/tmp, /run are the container's
# own tmpfs), with no network but its loopback. The command runs in the caller's directory
# (when it is under a mount), with the HINDSIGHT_* and HS_* variables passed in and
# container=podman set.
#   test/containers/run.sh BUILD_DIR [--] CMD [ARGS...]
#   test/containers/run.sh BUILD_DIR --prepare    prepare (or check) the root, print what it has
#   test/containers/run.sh BUILD_DIR --refresh    make the root again from the archive
# Exit statuses:
#   125  the container cannot run here (no podman or runc, not root, no network to the archive
#        for a root not made yet; podman's own errors are 125 too), said on stderr
#   else the command's
# Environment: HINDSIGHT_CONTAINERS_CACHE (~/.cache/hindsight-containers), HINDSIGHT_CLIENTS_MIRROR
# (the archive; else the first Debian URI in apt's sources, else http://deb.debian.org/debian).
set -u
HS_ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CACHE=${HINDSIGHT_CONTAINERS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/hindsight-containers}
ROOT=$CACHE/bookworm
READY=$ROOT/.hindsight-ready
# What the e2e cases run besides the build's own files; the libraries' packages are added.
PACKAGES=(gdb gdbserver valgrind python3)
# As on these VMs: their cgroups are hybrid, which crun refuses; podman's default open-file and
# process limits are more than the VM allows a container.
PODMAN=(podman --runtime runc --cgroup-manager cgroupfs)
LIMITS=(--ulimit nofile=1024:1024 --ulimit nproc=1024:1024)

cannot() { echo "containers: $*" >&2; exit 125; }
say() { echo "containers: $*" >&2; }

build_dir=${1:-}
shift || true
[[ -n $build_dir && -d $build_dir ]] || cannot "no build tree '$build_dir' (usage: test/containers/run.sh BUILD_DIR [--prepare|--refresh|[--] CMD...])"
build_dir=$(cd "$build_dir" && pwd)

source "$(dirname "${BASH_SOURCE[0]}")/../scripts/debian_mirror.sh"

build_programs() {  # [find's tests]: the build's programs that run in the lane
  find "$build_dir/server" "$build_dir/test/e2e" "$build_dir/test/progs" -maxdepth 1 -type f -perm -u+x "$@" 2>/dev/null
}

# The host's packages that own the shared libraries the build's 64-bit programs load (the server,
# the test programs, the e2e suite), so the root has the same ones.
library_packages() {
  local file lib
  build_programs "$@" |
    while read -r file; do
      # ELF, 64-bit: the 32-bit programs' libraries are not the lane's.
      [[ $(head -c 5 "$file" | od -An -tx1 | tr -d ' ') == 7f454c4602 ]] && ldd "$file" 2>/dev/null
    done | grep -oE '=> /[^ ]+' | cut -c4- | sort -u |
    # Each path as dpkg may know it, /lib or /usr/lib (merged /usr), in one look-up.
    sed -E 's#^/usr/#/#; p; s#^/#/usr/#' | xargs -r dpkg -S 2>/dev/null | cut -d: -f1 | sort -u
}

# The wanted packages the root lacks.
missing_in_root() {
  local p
  for p in "$@"; do
    dpkg-query --admindir="$ROOT/var/lib/dpkg" -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
      echo "$p"
  done
}

apt_in_root() {  # ROOT PACKAGE...
  local root=$1
  shift
  chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive \
    sh -c "apt-get -qq update && apt-get install -y -qq --no-install-recommends $* && apt-get clean" \
    >"$CACHE/apt.log" 2>&1
}

describe() {
  local v
  v=$(chroot "$ROOT" dpkg-query -W -f='${Package} ${Version}\n' gdb gdbserver valgrind 2>/dev/null | tr '\n' ';')
  echo "bookworm root: ${v%;}; $(podman --version)"
}

# Makes the root, or adds what it lacks, then says what it has.
prepare() {
  [[ $(id -u) == 0 ]] || cannot "making a Debian root needs root (debootstrap, apt in a chroot)"
  command -v debootstrap >/dev/null || cannot "debootstrap not found: install it (scripts/setup.sh --tests does)"
  local wanted missing url work
  # A root already checked against these programs needs nothing more.
  [[ -f $READY && -z $(build_programs -newer "$READY" | head -1) ]] && return
  mapfile -t wanted < <(printf '%s\n' "${PACKAGES[@]}"; library_packages)
  mkdir -p "$CACHE"
  if [[ ! -f $READY ]]; then
    url=$(debian_mirror)
    work=$ROOT.new
    rm -rf "$work"
    say "making the bookworm root from $url (debootstrap minbase, then apt: ${wanted[*]})"
    if ! debootstrap --variant=minbase bookworm "$work" "$url" >"$CACHE/debootstrap.log" 2>&1; then
      rm -rf "$work"
      cannot "debootstrap bookworm from $url failed (no network to the archive?): $(tail -1 "$CACHE/debootstrap.log")"
    fi
    if ! apt_in_root "$work" "${wanted[@]}"; then
      rm -rf "$work"
      cannot "apt-get install ${wanted[*]} in the root failed: $(tail -1 "$CACHE/apt.log")"
    fi
    rm -rf "$ROOT"
    mv "$work" "$ROOT"
  else
    mapfile -t missing < <(missing_in_root "${wanted[@]}")
    if ((${#missing[@]})); then
      say "adding to the root what the build now loads: ${missing[*]}"
      rm -f "$READY"
      apt_in_root "$ROOT" "${missing[@]}" || cannot "apt-get install ${missing[*]} in the root failed: $(tail -1 "$CACHE/apt.log")"
    fi
  fi
  if [[ -f $READY ]]; then
    touch "$READY"
  else
    describe >"$READY"
    say "ready: $(cat "$READY")"
  fi
}

command -v podman >/dev/null || cannot "podman not found: install podman and runc (scripts/setup.sh --tests does)"
command -v runc >/dev/null || cannot "runc not found: install it (scripts/setup.sh --tests does); podman's crun refuses these VMs' hybrid cgroups"
# One preparation at a time per cache (two test runs may share it).
mkdir -p "$(dirname "$CACHE")"
exec 9>>"$CACHE.lock"
flock 9
case ${1:-} in
  --refresh) rm -f "$READY"; rm -rf "$ROOT"; prepare; cat "$READY"; exit 0 ;;
  --prepare) prepare; cat "$READY"; exit 0 ;;
  --) shift ;;
esac
prepare
flock -u 9
[[ $# -gt 0 ]] || cannot "no command (usage: test/containers/run.sh BUILD_DIR [--] CMD [ARGS...])"

mounts=(-v "$HS_ROOT:$HS_ROOT:ro")
[[ $build_dir == "$HS_ROOT"/* ]] || mounts+=(-v "$build_dir:$build_dir:ro")
workdir=/
[[ $PWD == "$HS_ROOT" || $PWD == "$HS_ROOT"/* || $PWD == "$build_dir" || $PWD == "$build_dir"/* ]] && workdir=$PWD
envs=(--env HOME=/root --env container=podman)  # what podman sets in an image; not with --rootfs
for name in $(compgen -e | grep -E '^(HINDSIGHT_|HS_)'); do
  envs+=(--env "$name")
done
exec "${PODMAN[@]}" run --rm --network none --read-only "${LIMITS[@]}" "${mounts[@]}" --workdir "$workdir" \
  "${envs[@]}" --rootfs "$ROOT" "$@"
