#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tests/debug/check.sh (make check-debug): the kernel-module tests on a
# debug kernel.  Builds (once; tests/debug/build-kernel.sh caches it) Linux
# 6.1 from Debian's linux-source-6.1 with KASAN, KFENCE, lockdep
# (PROVE_LOCKING), PROVE_RCU_LIST, DEBUG_ATOMIC_SLEEP, DEBUG_OBJECTS_TIMERS
# and the frame-pointer unwinder, boots it under QEMU (-cpu qemu64: with
# -cpu max such a kernel hangs in its RCU-tasks self-test under TCG) and
# runs every k_ test, the d_stress load test, u_python (the tick's walk of
# a real CPython's frames and its code records) and z_lockdown on it.  Any KASAN, lockdep,
# RCU, debug-objects or WARN report in the kernel log fails the test it
# came in (the harness's check); the count of reports over the whole run
# is printed at the end.  Not part of make check: the first build takes
# about 15 minutes on 2 cores.
#
# Environment: CPROF_CACHE (where the kernel is kept), CPROF_BOOT_STALL
# (default here 300 s: this kernel boots slowly); arguments are passed to
# tests/vm/run.sh instead of the default test list ('k_*' d_stress u_python
# z_lockdown).
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$REPO"
start=$(date +%s)

tests/deps.sh --debug
tree=$(tests/debug/build-kernel.sh | tail -n 1)
kver=$(<"$tree/include/config/kernel.release")
echo "check-debug: $kver from $tree; the options that matter:"
grep -E '^(# )?CONFIG_(KASAN|KASAN_GENERIC|KASAN_INLINE|KASAN_VMALLOC|KFENCE|PROVE_LOCKING|PROVE_RCU|PROVE_RCU_LIST|DEBUG_ATOMIC_SLEEP|DEBUG_OBJECTS_TIMERS|DEBUG_OBJECTS_RCU_HEAD|UNWINDER_FRAME_POINTER|UNWINDER_ORC|PREEMPT|DEBUG_PREEMPT|CPUMASK_OFFSTACK)[= ]' \
	"$tree/.config" | sed 's/^/    /'

[[ $# -gt 0 ]] || set -- 'k_*' d_stress u_python z_lockdown
rc=0
CPROF_BOOT_STALL=${CPROF_BOOT_STALL:-300} tests/vm/run.sh --cpu qemu64 --kernel "$tree" "$@" || rc=$?

res=build/vm-results/$kver
# The checkers were on: a report-free run means something only if so.
for on in "KernelAddressSanitizer initialized" "kfence: initialized" "RCU lockdep checking is enabled"; do
	if ! grep -q "$on" "$res/boot.dmesg" 2>/dev/null; then
		echo "check-debug: the boot log lacks '$on'"
		rc=1
	fi
done

# The reports, counted over every test's kernel log and the boot's, or
# over the console if it holds more: a test that panics leaves no kernel
# log, its report is on the console only.
report='BUG:|WARNING:|Oops|UBSAN:|KASAN:|KFENCE:|ODEBUG:|INFO: |kernel BUG|general protection fault|rcu_.*detected stall'
reports=$(cat "$res"/*.dmesg 2>/dev/null | grep -cE "$report" || true)
console=$(grep -acE "$report" "$res/console.log" 2>/dev/null || true)
((${console:-0} <= reports)) || reports=$console
echo "check-debug: $reports kernel reports in $res (its kernel logs or console)"
echo "check-debug: took $(($(date +%s) - start)) s"
((reports == 0)) || rc=1
exit "$rc"
