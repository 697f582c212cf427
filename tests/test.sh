#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tests/test.sh [NAME] (make test, make test T=NAME): the contributor's
# loop, minutes where make check takes most of an hour.
#   - no NAME: the module's tests, k_* (k_ktap's in-kernel suites
#     first), on one kernel (TEST_KERNEL, default 6.1), whose VM starts
#     at once, the longest part; beside it, at a lower priority (nice
#     10: the VM first), the style checks (tests/lint.sh: if they fail,
#     the VM is stopped and nothing else runs), then the host unit tests
#     plain and sanitized (make -C userland test, whose plain build lint
#     made); the host checks (tests/host/run.sh) are make check's;
#   - NAME: that test alone, wherever it lives: a unit test
#     (tests/unit/NAME.c, both builds), a host check (tests/host/NAME.sh)
#     or VM tests (a name or glob of tests/vm/tests, on TEST_KERNEL; if
#     unset and they do not run on 6.1, on the first kernel they run on).
# Ends, as make check does, with one line "N passed, N failed"; exit
# status 0 only if nothing failed.  Packages are make check's business
# (tests/deps.sh): this runs with what is installed.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$REPO"
# shellcheck source=tally.sh
. tests/tally.sh
logs=$REPO/build/test
mkdir -p "$logs"
kernel=${TEST_KERNEL:-6.1}
start=$(date +%s)

# run NAME LOG CMD...: run CMD, its output shown and kept in LOG, and add
# its counts.
run() {
	local name=$1 log=$2 rc=0
	shift 2
	"$@" 2>&1 | tee "$log" || rc=$?
	tally "$name" "$rc" "$log"
	return "$rc"
}

unit() {
	run "make -C userland test" "$logs/unit.log" \
		make -s -C userland -j"$(nproc)" test ${1:+TEST_NAMES="$1"}
}

vm() {
	run "tests/vm/run.sh" "$logs/vm.log" tests/vm/run.sh --kernel "$kernel" "$@"
}

name=${1:-}
if [[ -z $name ]]; then
	# cprof-dump first: run.sh would build it too, in the same folder
	make -s -C userland -j"$(nproc)" cprof-dump
	tests/vm/run.sh --kernel "$kernel" 'k_*' >"$logs/vm.log" 2>&1 &
	vm_pid=$!
	# (a background job ignores ^C: it goes with this script)
	trap 'kill "$vm_pid" 2>/dev/null || true' EXIT
	# The VM is the longest part and the host has as many cores as it has
	# CPUs: lint and the unit tests take what it leaves (nice), so the VM
	# runs at the speed it would alone and the rest fills its waits.
	renice -n 10 -p $$ >/dev/null
	run "tests/lint.sh" "$logs/lint.log" tests/lint.sh --fail-fast || {
		echo "test: make lint failed: the VM stopped, nothing else runs until it passes"
		totals
		exit 1
	}
	unit || true
	echo "test: the k_ tests on $kernel, under way since lint began:"
	rc=0
	wait "$vm_pid" || rc=$?
	trap - EXIT
	cat "$logs/vm.log"
	tally "tests/vm/run.sh" "$rc" "$logs/vm.log"
elif [[ -f tests/unit/$name.c ]]; then
	unit "$name" || true
elif [[ $name == check-* && -f tests/host/$name.sh ]]; then
	make -s -C userland cprof-dump
	run "$name" "$logs/host.log" tests/unit/run-tests.sh \
		"host:$REPO/userland/cprof-dump:$REPO/tests/host" -- "$name.sh" || true
elif list=$(tests/vm/run.sh --list "$name" 2>/dev/null) && [[ -n $list ]]; then
	# a test that does not run on the default kernel: the first it runs on
	if [[ -z ${TEST_KERNEL:-} && -z $(tests/vm/run.sh --kernel "$kernel" --list "$name" 2>/dev/null) ]]; then
		echo "test: $name does not run on $kernel: on ${list%% *} (TEST_KERNEL= to choose)"
		kernel=${list%% *}
	fi
	vm "$name" || true
else
	echo "test: no test named '$name' (tests/unit/test_*.c, tests/host/check-*.sh, tests/vm/tests/*.sh)" >&2
	exit 2
fi
echo "test: took $(($(date +%s) - start)) s; logs in build/test/"
totals
