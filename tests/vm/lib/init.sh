#!/bin/busybox sh
# shellcheck shell=dash
# SPDX-License-Identifier: GPL-2.0
#
# /init of the cprof test VM (copied into the initramfs by initramfs.sh).
#
# Loads the 9p modules, mounts the host's / read-only and the writable
# results folder, prepares the host root (fresh proc, sys, dev, tmpfs /tmp
# and /run), makes it the root (switch_root) and runs tests/vm/lib/guest.sh
# in it with bash.
# guest.sh reports each test on the second serial port (ttyS1) and ends with
# DONE; anything that stops short of that (panic, hang, a failure here) is
# read as a failure by the host.  Then the VM powers off.
/bin/busybox --install -s /bin
export PATH=/bin

status() {
	echo "$*" >/dev/ttyS1
}

die() {
	echo "cprof-vm: init: $*" >/dev/console
	status "INIT-FAIL $*"
	poweroff -f
}

mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
stty -F /dev/ttyS1 raw -echo || die "cannot set up ttyS1"

while read -r mod; do
	insmod "/lib/modules/$mod" || die "insmod $mod failed"
done </modules.list

p9="trans=virtio,version=9p2000.L,msize=512000"
mount -t 9p -o "$p9" results /results || die "cannot mount the results folder"
# vm.env is written by run.sh: REPO=... and RESULTS=... (absolute paths
# without blanks, checked by run.sh).
# shellcheck source=/dev/null
. /results/vm.env || die "cannot read vm.env"
mount -t 9p -o "$p9,ro,cache=loose" hostroot /host || die "cannot mount the host root"
# Progress on the console: run.sh takes a silent console before the
# guest's first report for a boot that stopped.
echo "cprof-vm: init: the host's root is mounted" >/dev/console

# tmpfs over a host directory, keeping the repository visible if it lives
# below it (a clone in /tmp).
tmpfs_over() {
	dir=$1
	case "$REPO/" in
	"$dir"/*)
		mkdir -p /stash
		mount -o bind "/host$REPO" /stash || die "cannot bind $REPO"
		mount -t tmpfs -o mode=1777 tmpfs "/host$dir" || die "cannot mount tmpfs on $dir"
		mkdir -p "/host$REPO"
		mount -o move /stash "/host$REPO" || die "cannot move $REPO back"
		;;
	*)
		mount -t tmpfs -o mode=1777 tmpfs "/host$dir" || die "cannot mount tmpfs on $dir"
		;;
	esac
}

mount -t proc proc /host/proc || die "cannot mount /proc"
mount -t sysfs sys /host/sys || die "cannot mount /sys"
mount -t devtmpfs dev /host/dev || die "cannot mount /dev"
mkdir -p /host/dev/pts /host/dev/shm
ln -s /proc/self/fd /host/dev/fd
ln -s fd/0 /host/dev/stdin
ln -s fd/1 /host/dev/stdout
ln -s fd/2 /host/dev/stderr
mount -t devpts -o newinstance,ptmxmode=0666 devpts /host/dev/pts || die "cannot mount /dev/pts"
mount -t tmpfs -o mode=1777 tmpfs /host/dev/shm || die "cannot mount /dev/shm"
mount -t debugfs debugfs /host/sys/kernel/debug 2>/dev/null
mount -t tracefs tracefs /host/sys/kernel/tracing 2>/dev/null
tmpfs_over /tmp
tmpfs_over /run
mount -o move /results "/host$RESULTS" || die "cannot mount the results folder at $RESULTS"

# switch_root, not chroot: the tests then run at the root of their mount
# namespace, where the kernel allows what it refuses a chrooted process
# (unshare -U: k_access).  The shell it starts is PID 1 from then on, and
# powers the VM off with the host's static busybox.
echo "cprof-vm: init: starting guest.sh" >/dev/console
# shellcheck disable=SC2016 # expanded by the shell switch_root starts
exec switch_root /host /bin/sh -c '/bin/bash "$1" "$2"
	echo "cprof-vm: guest.sh exited with $?" >/dev/console
	sync
	exec /bin/busybox poweroff -f' sh "$REPO/tests/vm/lib/guest.sh" "$RESULTS"

