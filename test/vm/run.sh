#!/usr/bin/env bash
# test/vm/run.sh - runs a command inside a QEMU guest (TCG) booted from Debian's own kernel
# package: for what this host's kernel refuses (32-bit programs: the host switched IA-32
# emulation off). The guest sees this machine's root file system read-only over 9p with a tmpfs
# on top for writes, so the checkout, the build and every tool are at the same paths; the
# command runs in the current directory with this environment, its output streams back, and its
# exit status is this script's. It fails clearly, never hangs:
#   125  the lane cannot run here (QEMU, the kernel package or busybox missing; the guest did
#        not get to the command), said on stderr
#   124  the guest ran out of time (--timeout, default 600 s): it is killed
#
#   test/vm/run.sh [--timeout S] [--share DIR]... [--] CMD [ARGS...]
#     --share DIR   DIR is writable in the guest, at the same path (results to keep)
# Environment: QEMU (qemu-system-x86_64), HINDSIGHT_VM_KERNEL (the newest /boot/vmlinuz-*),
# HINDSIGHT_VM_CACHE (~/.cache/hindsight-vm: initramfs images, outside the checkout),
# HINDSIGHT_VM_MEMORY (2G), HINDSIGHT_VM_CPUS (2).
set -u
QEMU=${QEMU:-qemu-system-x86_64}
CACHE=${HINDSIGHT_VM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/hindsight-vm}
MEMORY=${HINDSIGHT_VM_MEMORY:-2G}
CPUS=${HINDSIGHT_VM_CPUS:-2}
# The kernel's own modules for 9p over virtio and the overlay, in load order.
MODULES=(virtio_ring virtio virtio_pci_modern_dev virtio_pci_legacy_dev virtio_pci netfs fscache 9pnet
         9pnet_virtio 9p overlay)

cannot() { echo "vm: $*" >&2; exit 125; }

timeout_s=600
shares=()
while [ $# -gt 0 ]; do
  case $1 in
    --timeout) timeout_s=$2; shift 2 ;;
    --timeout=*) timeout_s=${1#*=}; shift ;;
    --share) shares+=("$(realpath "$2")"); shift 2 ;;
    --share=*) shares+=("$(realpath "${1#*=}")"); shift ;;
    --) shift; break ;;
    -*) cannot "unknown option $1" ;;
    *) break ;;
  esac
done
[ $# -gt 0 ] || cannot "no command (usage: test/vm/run.sh [--timeout S] [--share DIR]... [--] CMD [ARGS...])"

command -v "$QEMU" >/dev/null || cannot "$QEMU not found: install qemu-system-x86 (scripts/setup.sh --tests installs it)"
KERNEL=${HINDSIGHT_VM_KERNEL:-$(ls -v /boot/vmlinuz-* 2>/dev/null | tail -1)}
[ -r "$KERNEL" ] || cannot "no kernel in /boot: install linux-image-amd64 (scripts/setup.sh --tests installs it)"
VERSION=${KERNEL##*/vmlinuz-}
MODDIR=/lib/modules/$VERSION
[ -d "$MODDIR" ] || cannot "no modules for kernel $VERSION in $MODDIR"
BUSYBOX=$(command -v busybox || true)
[ -n "$BUSYBOX" ] && ! ldd "$BUSYBOX" >/dev/null 2>&1 ||
  cannot "no static busybox: install busybox-static (scripts/setup.sh --tests installs it)"

# The initramfs: busybox, the modules and an init that mounts the host and runs the command.
# Built once per kernel and init (cached outside the checkout).
build_initramfs() {
  local image=$1 dir
  dir=$(mktemp -d)
  mkdir -p "$dir/bin" "$dir/modules"
  cp "$BUSYBOX" "$dir/bin/busybox"
  for m in "${MODULES[@]}"; do
    local ko
    ko=$(find "$MODDIR" -name "$m.ko" | head -1)
    if [ -n "$ko" ]; then
      cp "$ko" "$dir/modules/"
      echo "$m" >>"$dir/modules/order"
    elif ! grep -q "/$m.ko" "$MODDIR/modules.builtin" 2>/dev/null; then
      rm -rf "$dir"
      cannot "kernel $VERSION has no module $m (uncompressed .ko) and does not build it in"
    fi
  done
  cp "$(dirname "$0")/init.sh" "$dir/init"
  chmod +x "$dir/init"
  (cd "$dir" && find . | "$BUSYBOX" cpio -o -H newc 2>/dev/null | gzip -1) >"$image.tmp" && mv "$image.tmp" "$image"
  rm -rf "$dir"
}

mkdir -p "$CACHE" || cannot "cannot create $CACHE"
stamp=$( (echo "$VERSION"; cat "$(dirname "$0")/init.sh" "$BUSYBOX") | sha256sum | cut -c1-16)
INITRD=$CACHE/initramfs-$VERSION-$stamp.cpio.gz
[ -s "$INITRD" ] || build_initramfs "$INITRD"
[ -s "$INITRD" ] || cannot "could not build the initramfs in $CACHE"

# What the guest runs, and what it leaves: a directory shared writable at the same path.
RUN=$(mktemp -d /tmp/hindsight-vm.XXXXXX)
trap 'kill "$qemu" "$tailer" 2>/dev/null; rm -rf "$RUN"' EXIT
{
  echo "#!/bin/bash"
  export -p | grep -v -E '^declare -x (PWD|OLDPWD|SHLVL|_|TERM)='
  printf 'cd %q || exit 125\n' "$PWD"
  printf 'exec'
  printf ' %q' "$@"
  echo
} >"$RUN/command"
: >"$RUN/out"

args=(-accel tcg -cpu max -m "$MEMORY" -smp "$CPUS" -display none -no-reboot -nic none -monitor none
      -serial "file:$RUN/console" -kernel "$KERNEL" -initrd "$INITRD"
      -append "console=ttyS0 quiet loglevel=3 panic=-1 hsvm.run=$RUN hsvm.shares=${#shares[@]}"
      -fsdev local,id=host,path=/,security_model=none,readonly=on,multidevs=remap
      -device virtio-9p-pci,fsdev=host,mount_tag=host
      -fsdev "local,id=run,path=$RUN,security_model=none,multidevs=remap"
      -device virtio-9p-pci,fsdev=run,mount_tag=run)
for i in "${!shares[@]}"; do
  echo "${shares[$i]}" >"$RUN/share$i"
  args+=(-fsdev "local,id=share$i,path=${shares[$i]},security_model=none,multidevs=remap"
         -device "virtio-9p-pci,fsdev=share$i,mount_tag=share$i")
done

"$QEMU" "${args[@]}" </dev/null >"$RUN/qemu.log" 2>&1 &
qemu=$!
tail -f -n +1 --pid="$qemu" "$RUN/out" &
tailer=$!
( sleep "$timeout_s"; : >"$RUN/timed_out"; kill "$qemu" 2>/dev/null ) </dev/null >/dev/null 2>&1 &
watchdog=$!
wait "$qemu"
qemu_status=$?
pkill -P "$watchdog" 2>/dev/null
kill "$watchdog" 2>/dev/null
wait "$tailer" 2>/dev/null
if [ -s "$RUN/status" ]; then
  exit "$(cat "$RUN/status")"
fi
if [ -e "$RUN/timed_out" ]; then
  echo "vm: the guest ran out of time (${timeout_s} s) and was killed" >&2
  exit 124
fi
echo "vm: the guest ended before the command did (QEMU status $qemu_status)" >&2
tail -n 20 "$RUN/qemu.log" "$RUN/console" >&2
exit 125
