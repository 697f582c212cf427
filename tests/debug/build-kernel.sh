#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tests/debug/build-kernel.sh: build (once) the kernel make check-debug
# boots, from Debian's linux-source-6.1: x86_64 defconfig + kvm_guest.config
# + tests/debug/debug.config (KASAN, lockdep, PROVE_RCU_LIST, debug objects,
# KFENCE, the frame-pointer unwinder).  Prints the build tree's path on its
# last line: arch/x86/boot/bzImage is the kernel, the tree itself is the
# KDIR cprof.ko builds against.
#
# The tree is kept in $CPROF_CACHE (default: ${XDG_CACHE_HOME:-~/.cache}/cprof),
# under a name made from the config, the source package's version and
# RECIPE (raise it when this script builds differently), so a later run
# (another clone too) finds it and a changed config builds anew.  About 15 minutes on 2 cores; the log is build.log there.
set -euo pipefail

RECIPE=1
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
src_tar=$(ls /usr/src/linux-source-6.1.tar.xz 2>/dev/null) ||
	{ echo "build-kernel: /usr/src/linux-source-6.1.tar.xz missing: apt-get install linux-source-6.1" >&2; exit 1; }
version=$(dpkg-query -W -f='${Version}' linux-source-6.1)
cache=${CPROF_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/cprof}
key=$( (echo "$version $RECIPE"; cat "$here/debug.config") | sha256sum | cut -c1-12)
tree=$cache/debug-kernel-6.1-$key

if [[ -f $tree/.cprof-built ]]; then
	echo "build-kernel: using $tree (built $(date -r "$tree/.cprof-built" '+%F %T'))" >&2
	echo "$tree"
	exit 0
fi

mkdir -p "$cache"
# Another run building the same tree waits for it.
exec 8>"$cache/debug-kernel.lock"
flock 8
if [[ -f $tree/.cprof-built ]]; then
	echo "$tree"
	exit 0
fi
rm -rf "$tree" "$cache"/debug-kernel-6.1-*
mkdir -p "$tree"
log=$tree/build.log
t0=$(date +%s)
echo "build-kernel: building linux-source-6.1 $version with tests/debug/debug.config in $tree (about 15 minutes on 2 cores; log: $log)" >&2
{
	tar -xf "$src_tar" -C "$tree" --strip-components=1
	cd "$tree"
	make -s defconfig kvm_guest.config
	scripts/kconfig/merge_config.sh -m .config "$here/debug.config"
	make -s olddefconfig
} >"$log" 2>&1 || { tail -n 30 "$log" >&2; echo "build-kernel: configuring failed" >&2; exit 1; }

# Every line of debug.config must have held.
bad=0
while IFS= read -r line; do
	case $line in
	CONFIG_*=*) opt=${line%%=*} ;;
	"# CONFIG_"*" is not set") opt=${line#\# }; opt=${opt%% *} ;;
	*) continue ;;
	esac
	got=$(grep -E "^(# )?${opt}[= ]" "$tree/.config" || echo "$opt absent")
	if [[ $got != "$line" ]]; then
		echo "build-kernel: wanted '$line', the config has '$got'" >&2
		bad=1
	fi
done <"$here/debug.config"
((bad == 0)) || exit 1

if ! make -C "$tree" -j"$(nproc)" bzImage modules >>"$log" 2>&1; then
	tail -n 40 "$log" >&2
	echo "build-kernel: the build failed (log: $log)" >&2
	exit 1
fi
# What an external module build needs is now in the tree; the objects of
# the kernel itself are not.
find "$tree" -name '*.o' ! -path '*/scripts/*' ! -path '*/tools/*' -delete
touch "$tree/.cprof-built"
echo "build-kernel: built $(cat "$tree/include/config/kernel.release") in $(($(date +%s) - t0)) s" >&2
echo "$tree"
