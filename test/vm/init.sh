#!/bin/busybox sh
# The guest's first process (test/vm/run.sh): loads the kernel's 9p and overlay modules, puts
# the host's root (read-only) under a tmpfs overlay, mounts the run directory and the shares at
# their host paths, and runs the command there. Its status goes to the run directory; then
# power off.
bb=/bin/busybox
fail() { echo "vm init: $*" >/dev/ttyS0; $bb poweroff -f; }
$bb mkdir -p /proc /sys /dev /lower /upper /newroot
$bb mount -t proc proc /proc
$bb mount -t sysfs sys /sys
$bb mount -t devtmpfs dev /dev
$bb ip link set lo up  # GDB talks to the server over loopback
$bb hostname hindsight-vm
for m in $($bb cat /modules/order); do
  $bb insmod "/modules/$m.ko" || fail "insmod $m"
done
for arg in $($bb cat /proc/cmdline); do
  case $arg in
    hsvm.run=*) run=${arg#hsvm.run=} ;;
    hsvm.shares=*) shares=${arg#hsvm.shares=} ;;
  esac
done
opts=trans=virtio,version=9p2000.L,msize=262144,cache=loose
$bb mount -t 9p -o "$opts,ro" host /lower || fail "mount the host's root"
$bb mount -t tmpfs -o mode=0755 tmpfs /upper
$bb mkdir -p /upper/rw /upper/work
$bb mount -t overlay overlay -o lowerdir=/lower,upperdir=/upper/rw,workdir=/upper/work /newroot || fail "overlay"
$bb mount -t proc proc /newroot/proc
$bb mount -t sysfs sys /newroot/sys
$bb mount -t devtmpfs dev /newroot/dev
$bb mkdir -p /newroot/dev/pts /newroot/dev/shm
$bb mount -t devpts devpts /newroot/dev/pts
$bb mount -t tmpfs -o mode=1777 tmpfs /newroot/dev/shm
$bb mkdir -p "/newroot$run"
$bb mount -t 9p -o "$opts" run "/newroot$run" || fail "mount the run directory"
i=0
while [ "$i" -lt "${shares:-0}" ]; do
  path=$($bb cat "/newroot$run/share$i")
  $bb mkdir -p "/newroot$path"
  $bb mount -t 9p -o "$opts" "share$i" "/newroot$path" || fail "mount share $path"
  i=$((i + 1))
done
$bb chroot /newroot /bin/bash -c "bash '$run/command' >'$run/out' 2>&1; echo \$? >'$run/status.tmp'; mv '$run/status.tmp' '$run/status'; sync"
$bb sync
$bb poweroff -f
