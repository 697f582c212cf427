#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tests/demo/run.sh (make demo): build everything, then profile a sample
# workload with cprof and show the result, on this machine if its kernel
# can load modules and has its headers, else in the 6.1 test VM
# (tests/vm/run.sh).  The pprof file ends up in build/demo/cpu.pb.gz.
#
# Environment: CPROF_DEMO_KERNEL (default 6.1), the VM's kernel.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
export REPO
cd "$REPO"
demo=$REPO/build/demo

tests/deps.sh
make -s -C tests/workloads O="$REPO/build/workloads"
make -s -C userland
rm -rf "$demo"
mkdir -p "$demo"

kver=$(uname -r)
kdir=/lib/modules/$kver/build
if [[ -e /proc/modules && -d $kdir ]]; then
	echo "demo: profiling on this machine ($kver)"
	make -s module KDIR="$kdir"
	KVER=$kver CPROF_KO=$REPO/kmod/cprof.ko CPROF_DUMP=$REPO/userland/cprof-dump \
		WORKLOADS=$REPO/build/workloads OUT=$demo tests/demo/profile.sh
else
	vm_kernel=${CPROF_DEMO_KERNEL:-6.1}
	echo "demo: this kernel ($kver) cannot load modules here: profiling in a $vm_kernel VM"
	read -r vm_kver _ < <(tests/vm/run.sh --kernel "$vm_kernel" --list tests/demo/profile.sh)
	tests/vm/run.sh --kernel "$vm_kver" --print-logs tests/demo/profile.sh
	out=build/vm-results/$vm_kver/profile/cpu.pb.gz
	if [[ -f $out ]]; then
		cp "$out" "$demo/cpu.pb.gz"
	fi
fi
if [[ -f $demo/cpu.pb.gz ]]; then
	echo
	echo "demo: the pprof profile is $demo/cpu.pb.gz"
	echo "demo: look at it with: go tool pprof -top $demo/cpu.pb.gz  (or -http=:8080)"
fi
