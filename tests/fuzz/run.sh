#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
#
# tests/fuzz/run.sh [SECONDS]: build the libFuzzer target (make -C userland
# fuzz), run every seed in tests/fuzz/corpus/stream once (the replay), then
# fuzz for SECONDS (default 600; make fuzz FUZZ_SECONDS=N) from those seeds
# and build/fuzz/corpus, where new inputs are kept (not in the repository).
# A crash, leak, timeout, memory blow-up or wrong message (fuzz_stream.c)
# leaves its input in build/fuzz/crashes/ and fails the run.  Ends with the
# figures (executions, coverage, corpus) and "fuzz: N passed, N failed" for
# make check: the replay and the fuzzing are one check each.  FUZZ_JOBS=N
# (default 1) fuzzes in N processes (libFuzzer's -fork=N).
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
seconds=${1:-600}
jobs=${FUZZ_JOBS:-1}
[[ $seconds =~ ^[1-9][0-9]*$ ]] || { echo "fuzz: SECONDS must be a whole number" >&2; exit 2; }
[[ $jobs =~ ^[1-9][0-9]*$ ]] || { echo "fuzz: FUZZ_JOBS must be a whole number" >&2; exit 2; }
seeds=$REPO/tests/fuzz/corpus/stream
work=$REPO/build/fuzz
bin=$work/fuzz_stream
mkdir -p "$work/corpus" "$work/crashes"

make -s -C "$REPO/userland" fuzz
passed=0
failed=0
# The target keeps the pipeline's own lines (one per rejected input) off
# stderr and checks them; libFuzzer's and the sanitizers' reports remain.
opts=(-max_len=65536 -timeout=10 -rss_limit_mb=2048 -print_final_stats=1
	-dict="$REPO/tests/fuzz/stream.dict" -artifact_prefix="$work/crashes/")

# The replay: each seed once, as a regression test.
if "$bin" "${opts[@]}" "$seeds"/* >"$work/replay.log" 2>&1; then
	echo "fuzz: replayed $(find "$seeds" -type f | wc -l) seeds: ok"
	passed=$((passed + 1))
else
	echo "fuzz: replaying the seeds failed:"
	tail -n 30 "$work/replay.log"
	failed=$((failed + 1))
fi

# Fuzzing.  libFuzzer stops at the first crash.
before=$(find "$work/crashes" -type f | wc -l)
rc=0
fork=()
((jobs == 1)) || fork=(-fork="$jobs")
"$bin" "${opts[@]}" "${fork[@]}" -max_total_time="$seconds" "$work/corpus" "$seeds" \
	>"$work/fuzz.log" 2>&1 || rc=$?
after=$(find "$work/crashes" -type f | wc -l)
# One process ends with stat:: lines; with -fork, the last "#N: ... exec/s"
# status line has the totals.
execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/fuzz.log" | tail -n 1)
rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$work/fuzz.log" | tail -n 1)
if ((jobs > 1)); then
	execs=$(sed -n 's/^#\([0-9]*\): cov:.*/\1/p' "$work/fuzz.log" | tail -n 1)
	rate=$((${execs:-0} / seconds))
fi
read -r cov ft corp < <(sed -n 's/^#[0-9]*.* cov: \([0-9]*\) ft: \([0-9]*\) corp: \([0-9]*\).*/\1 \2 \3/p' \
	"$work/fuzz.log" | tail -n 1) || true
echo "fuzz: ${seconds} s: ${execs:-?} executions (${rate:-?}/s), coverage: ${cov:-?} edges, ${ft:-?} features, corpus ${corp:-?} inputs; $((after - before)) new crash inputs"
if ((rc == 0 && after == before)); then
	passed=$((passed + 1))
else
	echo "fuzz: the fuzzer stopped with status $rc; inputs in build/fuzz/crashes/:"
	grep -E '^==[0-9]+==ERROR|^SUMMARY|runtime error|^fuzz_stream: ' "$work/fuzz.log" | head -n 10 || true
	find "$work/crashes" -type f -newer "$work/replay.log" | head -n 5
	failed=$((failed + 1))
fi
echo "fuzz: $passed passed, $failed failed"
((failed == 0))
