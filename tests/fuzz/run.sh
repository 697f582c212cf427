#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
#
# tests/fuzz/run.sh [SECONDS]: build the libFuzzer targets (make -C userland
# fuzz) and, for each of them in turn, run every seed once (the replay), then
# fuzz from those seeds.  SECONDS (default 600; make fuzz FUZZ_SECONDS=N) is
# the fuzzing time in all, shared equally between the targets.
#
#   stream  fuzz_stream.c: the cprof stream pipeline; seeds in
#           tests/fuzz/corpus/stream, dictionary stream.dict
#   cfi     fuzz_cfi.c: cfi_compile() on ELF files of up to 256 KiB; seeds
#           in tests/fuzz/corpus/cfi (make-cfi-seeds.sh), dictionary cfi.dict
#   ustack  fuzz_ustack.c: ustack_walk(), a stack copy walked with a table;
#           seeds in tests/fuzz/corpus/ustack, dictionary ustack.dict
#   jitmap  fuzz_jitmap.c: a runtime's perf map read and looked up; seeds
#           in tests/fuzz/corpus/jitmap, dictionary jitmap.dict
#
# New inputs are kept in build/fuzz/corpus/TARGET (not in the repository;
# the seed folders are only read).  A crash, leak, timeout, memory blow-up
# or wrong outcome (see each target) leaves its input in
# build/fuzz/crashes/TARGET/ and fails the run.  Each target's replay and
# fuzzing are one check each; the run ends with the figures (executions,
# coverage, corpus) per target and "fuzz: N passed, N failed" for make check.
# FUZZ_TARGETS (default "stream cfi ustack jitmap") picks targets, FUZZ_JOBS=N (default 1)
# fuzzes in N processes (libFuzzer's -fork=N).  Logs: build/fuzz/TARGET-*.log.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
seconds=${1:-600}
jobs=${FUZZ_JOBS:-1}
read -r -a targets <<<"${FUZZ_TARGETS:-stream cfi ustack jitmap}"
[[ $seconds =~ ^[1-9][0-9]*$ ]] || { echo "fuzz: SECONDS must be a whole number" >&2; exit 2; }
[[ $jobs =~ ^[1-9][0-9]*$ ]] || { echo "fuzz: FUZZ_JOBS must be a whole number" >&2; exit 2; }
((${#targets[@]})) || { echo "fuzz: FUZZ_TARGETS names no target" >&2; exit 2; }
for t in "${targets[@]}"; do
	[[ -d $REPO/tests/fuzz/corpus/$t && -f $REPO/tests/fuzz/fuzz_$t.c ]] ||
		{ echo "fuzz: no target $t (FUZZ_TARGETS)" >&2; exit 2; }
done
work=$REPO/build/fuzz
# each target's share of the time, at least a second
share=$((seconds / ${#targets[@]}))
((share > 0)) || share=1

make -s -C "$REPO/userland" fuzz
# The stream target's inputs used to be kept in build/fuzz/corpus itself.
mkdir -p "$work/corpus/stream"
find "$work/corpus" -maxdepth 1 -type f -exec mv -t "$work/corpus/stream" {} +
passed=0
failed=0

# fuzz_target NAME: the replay and the fuzzing of build/fuzz/fuzz_NAME.
fuzz_target() {
	local t=$1 seeds=$REPO/tests/fuzz/corpus/$1 bin=$work/fuzz_$1
	local corpus=$work/corpus/$1 crashes=$work/crashes/$1
	local replay_log=$work/$1-replay.log fuzz_log=$work/$1-fuzz.log
	local before after rc execs rate cov ft corp opts fork
	mkdir -p "$corpus" "$crashes"
	# The targets check their outcome and abort on a wrong one (a line
	# "fuzz_NAME: ..."); libFuzzer's and the sanitizers' reports remain.
	# cfi's inputs grow past 64 KiB: compressed sections, many FDEs
	local max_len=65536
	[[ $t == cfi ]] && max_len=262144
	opts=("-max_len=$max_len" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1
		-dict="$REPO/tests/fuzz/$t.dict" -artifact_prefix="$crashes/")

	# The replay: each seed once, as a regression test.
	if "$bin" "${opts[@]}" "$seeds"/* >"$replay_log" 2>&1; then
		echo "fuzz: $t: replayed $(find "$seeds" -type f | wc -l) seeds: ok"
		passed=$((passed + 1))
	else
		echo "fuzz: $t: replaying the seeds failed:"
		tail -n 30 "$replay_log"
		failed=$((failed + 1))
	fi

	# Fuzzing.  libFuzzer stops at the first crash.  The first folder
	# is where it writes new inputs: never the seeds'.
	before=$(find "$crashes" -type f | wc -l)
	rc=0
	fork=()
	((jobs == 1)) || fork=(-fork="$jobs")
	"$bin" "${opts[@]}" "${fork[@]}" -max_total_time="$share" "$corpus" "$seeds" \
		>"$fuzz_log" 2>&1 || rc=$?
	after=$(find "$crashes" -type f | wc -l)
	# One process ends with stat:: lines; with -fork, the last "#N: ...
	# exec/s" status line has the totals.
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$fuzz_log" | tail -n 1)
	rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$fuzz_log" | tail -n 1)
	if ((jobs > 1)); then
		execs=$(sed -n 's/^#\([0-9]*\): cov:.*/\1/p' "$fuzz_log" | tail -n 1)
		rate=$((${execs:-0} / share))
	fi
	cov='' ft='' corp=''
	read -r cov ft corp < <(sed -n 's/^#[0-9]*.* cov: \([0-9]*\) ft: \([0-9]*\) corp: \([0-9]*\).*/\1 \2 \3/p' \
		"$fuzz_log" | tail -n 1) || true
	echo "fuzz: $t: ${share} s: ${execs:-?} executions (${rate:-?}/s), coverage: ${cov:-?} edges, ${ft:-?} features, corpus ${corp:-?} inputs; $((after - before)) new crash inputs"
	if ((rc == 0 && after == before)); then
		passed=$((passed + 1))
	else
		echo "fuzz: $t: the fuzzer stopped with status $rc; inputs in build/fuzz/crashes/$t/:"
		grep -E "^==[0-9]+==ERROR|^SUMMARY|runtime error|^fuzz_$t: " "$fuzz_log" | head -n 10 || true
		find "$crashes" -type f -newer "$replay_log" | head -n 5
		failed=$((failed + 1))
	fi
}

for t in "${targets[@]}"; do
	fuzz_target "$t"
done
echo "fuzz: $passed passed, $failed failed"
((failed == 0))
