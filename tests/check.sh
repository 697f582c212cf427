#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tests/check.sh (make check): install what is missing, run the style
# checks (tests/lint.sh: make lint; if they fail make check stops there, a
# minute in), the host unit tests (make -C userland test), the host checks of the man pages and
# documentation (tests/host/run.sh) and 30 s of the fuzzers
# (tests/fuzz/run.sh), meanwhile the Debian packages (tests/deb/check.sh:
# built, checked and installed, so that the VM test i_dkms finds DKMS's
# module) and then the VM tests' modules (run.sh --build-only), then the
# VM tests on every kernel
# (tests/vm/run.sh: all but the long ones, make check-long's), and end with one line "N passed, N failed" counting
# all of them.  Exit status 0 only if nothing failed.
#
# Environment: CPROF_VM_KERNELS (default "6.1 6.12 6.1-rt 6.12-rt"), passed on to run.sh;
# CPROF_CHECK_MINUTES (default 80): the time make check may take.  The VM
# tests get what the earlier steps left of it (CPROF_DEADLINE for run.sh),
# so a slow machine ends with "not run" failures and a full report, not a
# run killed from outside with nothing said.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$REPO"
logs=$REPO/build/check
mkdir -p "$logs"
rm -f "$logs"/{lint,unit,host,fuzz,deb,vmbuild,vm,tally}.log "$logs"/{fuzz,deb}.rc
start=$(date +%s)
minutes=${CPROF_CHECK_MINUTES:-80}
[[ $minutes =~ ^[1-9][0-9]*$ ]] || { echo "check: CPROF_CHECK_MINUTES must be a number of minutes" >&2; exit 2; }
export CPROF_DEADLINE=$((start + minutes * 60))
# shellcheck source=tally.sh
. tests/tally.sh

# section TITLE: a heading with the time since make check started.
section() {
	local t=$(($(date +%s) - start))
	printf '\n==== [%d:%02d] %s\n' $((t / 60)) $((t % 60)) "$*"
}

section "packages"
tests/deps.sh

section "style: checkpatch, sparse, shellcheck, userland warnings (tests/lint.sh)"
rc=0
tests/lint.sh --fail-fast 2>&1 | tee "$logs/lint.log" || rc=$?
tally "tests/lint.sh" "$rc" "$logs/lint.log"
if [[ $rc -ne 0 ]]; then
	# a style slip fails in a minute, not after the VM tests
	echo "check: make lint failed: nothing else runs until it passes"
	echo "$passed passed, $failed failed"
	exit 1
fi

# The Debian packages in the background while the host unit tests, checks
# and fuzzers run (two cores), their output shown in its own section then;
# after them in the same lane, each kernel's module and initramfs for the
# VM tests (run.sh --build-only: the VM run finds them built; a build that
# fails is reported there, with its log).
(
	rc=0
	tests/deb/check.sh >"$logs/deb.log" 2>&1 || rc=$?
	echo "$rc" >"$logs/deb.rc"
	tests/vm/run.sh --build-only >"$logs/vmbuild.log" 2>&1 || true
) &
lane=$!

section "host unit tests (make -C userland test)"
if [[ -f userland/Makefile ]]; then
	rc=0
	make -C userland -j"$(nproc)" test 2>&1 | tee "$logs/unit.log" || rc=$?
	tally "make -C userland test" "$rc" "$logs/unit.log"
else
	echo "check: userland/Makefile missing: no host unit tests to run"
fi

section "host checks: man pages, documentation against the code, version (tests/host/run.sh)"
rc=0
tests/host/run.sh 2>&1 | tee "$logs/host.log" || rc=$?
tally "tests/host/run.sh" "$rc" "$logs/host.log"

section "fuzzing the stream decoder, the CFI compiler, the stack-copy walk and the perf-map reader for 30 s (tests/fuzz/run.sh)"
rc=0
tests/fuzz/run.sh 30 2>&1 | tee "$logs/fuzz.log" || rc=$?
tally "tests/fuzz/run.sh" "$rc" "$logs/fuzz.log"

wait "$lane" || true
section "Debian packages: make deb, lintian, installed with dpkg -i, DKMS (tests/deb/check.sh, run alongside the above)"
cat "$logs/deb.log"
sed 's/^/vm build: /' "$logs/vmbuild.log" 2>/dev/null || true
tally "tests/deb/check.sh" "$(cat "$logs/deb.rc" 2>/dev/null || echo 1)" "$logs/deb.log"

section "VM tests (tests/vm/run.sh)"
rc=0
tests/vm/run.sh 2>&1 | tee "$logs/vm.log" || rc=$?
tally "tests/vm/run.sh" "$rc" "$logs/vm.log"

section "summary"
# What failed, again, so that the end of a long log (all a CI page may keep)
# says which check it was: each runner's FAIL lines, a unit test binary's
# "---- ... failed" heading, a fuzz target's failure line.
if ((failed)); then
	for log in lint unit host fuzz deb vm; do
		[[ -f $logs/$log.log ]] || continue
		grep -E '^(FAIL|---- \[.*\] .* failed|fuzz: .*(failed:|stopped with))' "$logs/$log.log" |
			head -n 20 | sed "s/^/check: $log: /" || true
	done
	[[ ! -f $logs/tally.log ]] || cat "$logs/tally.log"
fi
elapsed=$(($(date +%s) - start))
echo "check: took $((elapsed / 60)) min $((elapsed % 60)) s; logs in build/check/, VM test output in build/vm-results/"
totals
