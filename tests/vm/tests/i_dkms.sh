#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# i_dkms: cprof as the packages install it (make deb; apt install
# ./build/deb/cprof-dkms_*.deb ./build/deb/cprof-dump_*.deb, which make
# check does before the VM tests).  The host's DKMS built cprof.ko for this
# kernel and installed it in /lib/modules/KVER/updates/dkms; the guest sees
# the host's /, so:
#   - modprobe finds that module, the same file as DKMS's build of VERSION
#     for this kernel, and loads it; its version is VERSION;
#   - it profiles: a stream read with cat is well-formed and holds
#     cpuburn's samples, and the packaged cprof-dump (/usr/bin) runs a
#     profile itself (-d) whose top table has cpuburn's functions;
#   - modprobe -r unloads it.
# Skipped when the host has no DKMS build of this VERSION for this kernel.
# Runs on 6.1 and 6.12-rt: a series and a preemption model each (DKMS
# builds for all four kernels, and tests/deb/check.sh checks each build).
# vm-kernels: 6.1 6.12-rt
set -euo pipefail
# shellcheck source=../lib/kprof.sh
. "$REPO/tests/vm/lib/kprof.sh"

version=$(<"$REPO/VERSION")
module_dir=/var/lib/dkms/cprof/$version/$KVER/$(uname -m)/module
built=
for f in "$module_dir"/cprof.ko "$module_dir"/cprof.ko.xz "$module_dir"/cprof.ko.zst; do
	[[ -f $f ]] && built=$f
done
if [[ -z $built ]]; then
	echo "i_dkms: no DKMS build of cprof $version for $KVER on the host ($module_dir): skip"
	echo "i_dkms: make deb; apt install ./build/deb/cprof-dkms_${version}_all.deb (or dkms install cprof/$version -k $KVER)"
	exit 77
fi
echo "DKMS build: $built"

# modprobe's module is DKMS's, installed where Debian's DKMS puts it.
installed=$(modinfo -k "$KVER" -n cprof 2>/dev/null) || fail "modinfo finds no cprof module for $KVER: DKMS built it but did not install it (dkms install cprof/$version -k $KVER)"
echo "modprobe's module: $installed"
[[ $installed == /lib/modules/$KVER/updates/dkms/cprof.ko* ]] ||
	fail "modprobe would load $installed, not DKMS's module in /lib/modules/$KVER/updates/dkms"
cmp -s "$installed" "$built" || fail "$installed is not DKMS's build $built (dkms status: installed and built differ)"
echo "modinfo: version $(modinfo -F version "$installed"), signer '$(modinfo -F signer "$installed")'"

[[ ! -d /proc/cprof ]] || fail "cprof is loaded before the test"
modprobe cprof freq=499 seconds=3 || fail "modprobe cprof failed"
[[ -d /proc/cprof ]] || fail "modprobe cprof: no /proc/cprof"
[[ $(</sys/module/cprof/version) == "$version" ]] ||
	fail "the loaded module is version $(</sys/module/cprof/version), not $version"
[[ $(awk -F= '$1 == "freq" { print $2 }' /proc/cprof/ctl) == 499 ]] || fail "freq=499 at load time did not reach ctl"
echo "loaded: $(grep '^cprof ' /proc/modules), taint $(</proc/sys/kernel/tainted)"

bg=()
"$WORKLOADS/cpuburn" 600 >/dev/null &
bg+=($!)
trap 'kill "${bg[@]}" 2>/dev/null || true' EXIT

# A profile read with cat, decoded independently of cprof-dump.
profile "$OUT/p.raw"
samples=$(rawk '$1 == "S" && $S_comm == "cpuburn" { n++ } END { print n + 0 }' "$OUT/p.raw.txt")
echo "cat /proc/cprof/profile: $(wc -c <"$OUT/p.raw") bytes, $samples cpuburn samples"
((samples >= 200)) || fail "only $samples cpuburn samples in 3 s at 499 Hz"

# The packaged cprof-dump, if the package is installed; else this tree's.
dump=$CPROF_DUMP
if [[ $(dpkg-query -W -f='${db:Status-Status}' cprof-dump 2>/dev/null || true) == installed ]]; then
	dump=/usr/bin/cprof-dump
fi
echo "cprof-dump: $dump, $("$dump" --version)"
"$dump" -d 3 -f top -n 0 -o "$OUT/top.txt" 2>"$OUT/dump.err" || fail "$dump -d 3 -f top failed: $(cat "$OUT/dump.err")"
head -n 12 "$OUT/top.txt"
for fn in leaf1 leaf2 leaf3 main; do
	grep -Eq " $fn\$" "$OUT/top.txt" || fail "no $fn in the top table of cprof-dump -d 3"
done

kill "${bg[@]}" 2>/dev/null || true
wait "${bg[@]}" 2>/dev/null || true
modprobe -r cprof || fail "modprobe -r cprof failed"
[[ ! -d /proc/cprof ]] || fail "/proc/cprof still there after modprobe -r"
echo "i_dkms: ok"
