#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# initramfs.sh KVER OUTPUT [MODDIR]: build the test VM's initramfs for
# kernel KVER, whose modules are in MODDIR (default /lib/modules/KVER; a
# kernel build tree is one too, through its modules.builtin).
#
# It holds only a static busybox, tests/vm/lib/init.sh as /init, and the
# modules that kernel needs to mount the host's root over virtio 9p
# (virtio_pci, 9pnet_virtio, 9p and what modules.dep says they need; the
# ones built into KVER are skipped).  Compressed modules are decompressed
# here because busybox insmod cannot.  The archive is an uncompressed newc
# cpio: unpacking is faster than decompressing under TCG.
set -euo pipefail

die() { echo "initramfs: $*" >&2; exit 1; }

[[ $# -eq 2 || $# -eq 3 ]] || die "usage: initramfs.sh KVER OUTPUT [MODDIR]"
kver=$1
output=$2
moddir=${3:-/lib/modules/$kver}
libdir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
wanted=(virtio_pci 9pnet_virtio 9p)

[[ -r $moddir/modules.dep || -r $moddir/modules.builtin ]] ||
	die "no $moddir/modules.dep: is the kernel image package for $kver installed?"
busybox=$(command -v busybox) || die "busybox not found: apt-get install busybox-static"
if ldd "$busybox" >/dev/null 2>&1; then
	die "$busybox is dynamically linked: apt-get install busybox-static"
fi

# module_path NAME: path (relative to $moddir) of NAME's module, empty if it
# is built in; fails if the kernel has it neither way.
module_path() {
	local name=$1 re line
	re="^([^:]*/)?${name//-/[-_]}\\.ko(\\.xz|\\.zst|\\.gz)?:"
	if line=$(grep -m 1 -Eo "$re" "$moddir/modules.dep" 2>/dev/null); then
		echo "${line%:}"
		return 0
	fi
	grep -Eq "(^|/)${name//-/[-_]}\\.ko$" "$moddir/modules.builtin" 2>/dev/null && return 0
	die "$kver has no module $name (neither in modules.dep nor modules.builtin)"
}

# Load order: for each wanted module, its dependencies as modules.dep lists
# them, reversed (the last one listed has no dependency of its own), then
# the module itself.
declare -A seen=()
order=()
add() {
	[[ -n $1 && -z ${seen[$1]:-} ]] || return 0
	seen[$1]=1
	order+=("$1")
}
for name in "${wanted[@]}"; do
	path=$(module_path "$name")
	[[ -n $path ]] || continue
	read -r -a deps <<<"$(grep -E "^${path//./\\.}:" "$moddir/modules.dep" | cut -d: -f2)"
	for ((i = ${#deps[@]} - 1; i >= 0; i--)); do
		add "${deps[i]}"
	done
	add "$path"
done

stage=$(mktemp -d "${output}.stage.XXXXXX")
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage"/{bin,dev,proc,sys,host,results,lib/modules}
cp "$busybox" "$stage/bin/busybox"
install -m 0755 "$libdir/init.sh" "$stage/init"
: >"$stage/modules.list"
for path in "${order[@]}"; do
	base=$(basename "$path")
	base=${base%.xz}
	base=${base%.zst}
	base=${base%.gz}
	case $path in
	*.xz) xz -dc "$moddir/$path" >"$stage/lib/modules/$base" ;;
	*.zst) zstd -qdc "$moddir/$path" >"$stage/lib/modules/$base" ;;
	*.gz) gzip -dc "$moddir/$path" >"$stage/lib/modules/$base" ;;
	*) cp "$moddir/$path" "$stage/lib/modules/$base" ;;
	esac
	echo "$base" >>"$stage/modules.list"
done
# The kernel needs /dev/console before /init runs to give it a console.
mknod -m 0600 "$stage/dev/console" c 5 1

(cd "$stage" && find . -mindepth 1 | LC_ALL=C sort | cpio --quiet -o -H newc -R 0:0) >"$output.tmp"
mv "$output.tmp" "$output"
