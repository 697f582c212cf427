#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR MIT
#
# Run unit test binaries in one or more builds and add up their counts.
#
#   run-tests.sh MODE:CPROF_DUMP:TESTDIR... -- test_a test_b ...
#
# The builds run side by side, each build's tests one after the other.
# Each test runs from the repository root with CPROF_DUMP (the cprof-dump of
# that build) and TEST_TMPDIR (a fresh directory, removed afterwards) in its
# environment.  Its last line must be "<name>: N passed, N failed"; exit 77
# means skipped.  Anything else (a crash, a sanitizer report, a non-zero exit
# without that line) counts as one failure.  Output of failing tests is
# shown; all of it is kept in build/test-logs/.  Skipped binaries are
# counted on a line of their own; the last line printed is
# "N passed, N failed" (checks), and the exit status is 0 only if none failed.
set -u

root=$(cd "$(dirname "$0")/../.." && pwd)
logs=$root/build/test-logs
mkdir -p "$logs"

builds=
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
	builds="$builds $1"
	shift
done
[ $# -gt 0 ] && shift

export ASAN_OPTIONS="halt_on_error=1:abort_on_error=0:detect_leaks=1:exitcode=99"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:exitcode=98"
LSAN_OPTIONS="suppressions=$(cd "$(dirname "$0")" && pwd)/lsan.supp"
export LSAN_OPTIONS

# run_build MODE CPROF_DUMP TESTDIR TEST...: one build's tests in turn,
# their lines on stdout, its counts ("passed failed skipped") last.
run_build() {
	mode=$1 dump=$2 dir=$3
	shift 3
	passed=0 failed=0 skipped=0
	for t in "$@"; do
		log=$logs/$mode-$t.log
		tmp=$(mktemp -d "${TMPDIR:-/tmp}/cprof-test.XXXXXX")
		(cd "$root" && CPROF_DUMP=$dump TEST_TMPDIR=$tmp \
			"$dir/$t") >"$log" 2>&1
		rc=$?
		rm -rf "$tmp"
		last=$(grep -E "^$t: [0-9]+ passed, [0-9]+ failed$" "$log" | tail -n 1)
		if [ $rc -eq 77 ]; then
			skipped=$((skipped + 1))
			echo "skip [$mode] $t: $(grep '^SKIP' "$log" | head -n 1 | cut -c6-)"
			continue
		fi
		if [ -n "$last" ]; then
			p=$(echo "$last" | sed -E 's/.*: ([0-9]+) passed, ([0-9]+) failed/\1/')
			f=$(echo "$last" | sed -E 's/.*: ([0-9]+) passed, ([0-9]+) failed/\2/')
		else
			p=0 f=0
		fi
		if [ $rc -ne 0 ] && [ "$f" -eq 0 ]; then
			f=1	# crashed or exited without a report
		fi
		passed=$((passed + p))
		failed=$((failed + f))
		if [ "$f" -ne 0 ]; then
			echo "---- [$mode] $t failed (exit $rc), log $log:"
			grep -v '^ok ' "$log" | tail -n 40
			echo "----"
		else
			echo "ok   [$mode] $t ($p checks)"
		fi
	done
	echo "counts $passed $failed $skipped"
}

# The builds side by side, one core each (a test binary is one thread; a
# test sees one other running, as it does beside make check's package
# build), their lines printed in the builds' order once all are done.
for b in $builds; do
	mode=${b%%:*}
	rest=${b#*:}
	run_build "$mode" "${rest%%:*}" "${rest#*:}" "$@" >"$logs/run-$mode.out" 2>&1 &
done
wait
passed=0 failed=0 skipped=0
for b in $builds; do
	mode=${b%%:*}
	out=$logs/run-$mode.out
	grep -v '^counts ' "$out"
	counts=$(grep '^counts [0-9]* [0-9]* [0-9]*$' "$out" | tail -n 1)
	if [ -z "$counts" ]; then
		echo "---- [$mode]: no counts: its run was cut short"
		failed=$((failed + 1))
		continue
	fi
	passed=$((passed + $(echo "$counts" | cut -d' ' -f2)))
	failed=$((failed + $(echo "$counts" | cut -d' ' -f3)))
	skipped=$((skipped + $(echo "$counts" | cut -d' ' -f4)))
done
[ $skipped -gt 0 ] && echo "$skipped test binaries skipped"
echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
