#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# check-benchsum.sh: tests/bench/summary.sh on small results folders made
# here, one whose figures meet every target and one that misses them: the
# rows it prints (none for a benchmark that did not run), the verdicts,
# costs in instructions under -icount, and the run each row names.  Run
# by tests/host/run.sh.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$REPO"
# shellcheck source=lib.sh
. tests/host/lib.sh
tmp=${TEST_TMPDIR:-$(mktemp -d)}
sum=tests/bench/summary.sh

# results DIR ICOUNT FPTAB TABLE BCC_RATE BARE CPROF: a results folder of
# b_perf, b_unwind, b_python, b_offcpu, b_start and b_dump; FPTAB and
# TABLE are the handler medians (us) against perf -g's 3.0 (on qsortsplit)
# and dwarf's 9.0 (the frame-pointer walk fpfp 2.0, the floor 0.5),
# BCC_RATE the round trips/s under bcc (none: 1000, cprof: 990,
# recording 10 %, each record 3 us by the module's clock), BARE and CPROF
# the job's ms in its two runs at 99 Hz.
results() {
	local d=$1
	mkdir -p "$d"/b_perf "$d"/b_unwind "$d"/b_python "$d"/b_offcpu "$d"/b_start "$d"/b_dump "$d"/b_soak
	printf 'REPO=/r\nICOUNT=%s\nCOMMIT=abc1234\nDATE=2026-01-02\n' "$2" >"$d/vm.env"
	printf '%s\n' 'fptab.median_us '"$3" 'perfg.median_us 3.0' \
		'table.median_us '"$4" 'dwarf.median_us 9.0' 'fpfp.median_us 2.0' \
		'fptab.bytes_per_sample 112' 'fpfp.bytes_per_sample 96' \
		'table.report_ms 40' 'dwarf.report_ms 300' >"$d/b_unwind/results"
	printf '%s\n' 'py.median_us 6.0' 'nopy.median_us 5.0' 'py.python_frames_per_sample 7.0' \
		>"$d/b_python/results"
	printf '%s\n' 'rate_none 1000' 'rate_cprof 990' "rate_bcc $5" 'rate_perf 400' \
		'cprof_events 100' 'switches 1000' 'cprof_offcpu_ns_total 300000' >"$d/b_offcpu/results"
	printf '%s\n' 'first_tick_cold_ms 300' 'first_tick_warm_ms 200' >"$d/b_start/results"
	printf '%s\n' 't_first_ms 300' 't_nosym_ms 80' 't_second_ms 100' 't_report_ms 1500' >"$d/b_dump/results"
	printf '%s\n' 'minutes 30' 'windows 1800' 'samples 100000' 'late 10' 'rss3_kb 14000' \
		'rss_end_kb 14100' 'rss_max_kb 14200' >"$d/b_soak/results"
	local bare=$6 cprof=$7
	printf '%s\n' 'h_null_med_999 0.5' 'h_cprof_med_999 1.0' 'h_perf_med_999 3.0' \
		"wall_bare_99 $(((${bare% *} + ${bare#* }) / 2))" \
		"wall_cprof_99 $(((${cprof% *} + ${cprof#* }) / 2))" \
		'wall_perf_99 1000' 't_perf_report_ms 1000' 't_cprof_dump_ms 10' >"$d/b_perf/results"
	printf '%s\n' "bare 99 1 ${bare% *}" "cprof 99 1 ${cprof% *}" "perf 99 1 1000" \
		"bare 99 2 ${bare#* }" "cprof 99 2 ${cprof#* }" "perf 99 2 1000" >"$d/b_perf/runs"
	printf '%s\n' '99 1 10 10 0 0 20000' '99 2 10 10 0 0 20000' >"$d/b_perf/cprof-runs"
}

# row OUTPUT FIGURE: the row of FIGURE (its first words)
row() { grep -F "| $2" <<<"$1" || true; }

# the figures meet every target: off-CPU per recorded switch 0.1x bcc's
# (10 % of switches recorded, each costing 50.5 us of round trip, bcc's
# 500 us), the job 0.2 % slower at 99 Hz
results "$tmp/good/6.1-good" 0 0.9 0.8 500 "1000 1000" "1002 1002"
out=$("$sum" "$tmp/good/6.1-good" 2>&1) || not_ok "summary.sh failed on good figures: $out"
rows=$(grep '^| [a-z]' <<<"$out" | grep -v '^| figure |' || true)
if [[ $(wc -l <<<"$rows") == 11 ]]; then
	ok "good figures: 11 rows"
else
	not_ok "good figures: not 11 rows: $out"
fi
expect_none "good figures: every row with a target met, with its kernel and run" \
	"$(grep -v -e '| 6.1-good | .* | met | abc1234, 2026-01-02, -icount shift=0 |$' \
		-e '| 6.1-good | .* | - | - | abc1234, 2026-01-02, -icount shift=0 |$' <<<"$rows" || true)"
expect_found "costs in instructions under -icount shift=0" "900 instr against 3000 instr: 0.30x" \
	"$(row "$out" "tick, FP code with tables")"
expect_found "off-CPU: cost per recorded switch against bcc's" "0.10x" "$(row "$out" "off-CPU")"
expect_found "FP code with tables: perf -g on qsortsplit where it did not run on the same code" \
	"against perf -g on qsortsplit | 6.1-good | 900 instr against 3000 instr: 0.30x | <= 0.35x | met |" \
	"$(row "$out" "tick, FP code with tables")"
expect_found "Python frames: the tick with them against without, no target" \
	"| 6000 instr against 5000 instr: +1000 instr for 7.0 Python frames a sample, 143 instr a frame | - | - |" \
	"$(row "$out" "tick with CPython's frames")"
expect_found "Python frames' row after the tables' rows" "tick with CPython's frames" \
	"$(grep -A1 -F '| tick, tables on -O2 code' <<<"$out" | tail -n 1)"
expect_found "second conversion against --no-symbolize" "100 ms against 80 ms: 1.25x | <= 1.5x | met" \
	"$(row "$out" "second conversion")"
expect_found "first conversion against perf report: no target" "perf report 1500 ms, cprof-dump 300 ms: 5.0x faster | - | - |" \
	"$(row "$out" "first conversion")"
expect_found "soak: samples outside their window, RSS" \
	"10 of 100000 (0.01 %), 1800 windows; RSS 14000 kB at minute 3, 14100 at the end, at most 14200 | <= 1 % | met" \
	"$(row "$out" "samples outside their window (b_soak: --every 1 for 30 min)")"

# a benchmark that did not run has no row; under shift=1 an instruction
# is 2 ns
results "$tmp/part/6.12-part" 1 0.9 0.8 500 "1000 1000" "1002 1002"
rm -r "$tmp/part/6.12-part/b_offcpu" "$tmp/part/6.12-part/b_dump"
out=$("$sum" "$tmp/part/6.12-part" 2>&1) || not_ok "summary.sh failed without b_offcpu: $out"
if [[ -z $(row "$out" "off-CPU") ]]; then
	ok "no b_offcpu results: no off-CPU row"
else
	not_ok "an off-CPU row without b_offcpu results: $out"
fi
expect_found "no b_dump results: conversion from b_perf's capture" "(b_perf" "$(row "$out" "conversion")"
# b_threads: the snapshot's one row, figures without a target
mkdir "$tmp/part/6.12-part/b_threads"
printf '%s\n' 'threads 10065' 'pass_ms 300.000' 'stream_bytes 3019500' 'rss_kb 39936' \
	>"$tmp/part/6.12-part/b_threads/results"
expect_found "b_threads' results: the snapshot row" \
	"| 10065 threads in 150 M instr (the module's pass); stream 3.0 MB, 300 bytes a thread; cprof-dump's largest RSS 39.0 MB | - | - |" \
	"$("$sum" "$tmp/part/6.12-part" 2>&1 | grep -F "| snapshot of every thread" || true)"
# b_tick: b_perf's callbacks alone, read as b_perf's
mkdir "$tmp/part/6.12-part/b_tick"
printf '%s\n' 'h_null_med_999 0.5' 'h_cprof_med_999 1.5' 'h_perf_med_999 3.0' \
	>"$tmp/part/6.12-part/b_tick/results"
rm -r "$tmp/part/6.12-part/b_perf"
expect_found "b_tick's results: the tick row" "750 instr against 1500 instr (floor 250 instr): 0.50x | <= 0.5x | met |" \
	"$("$sum" "$tmp/part/6.12-part" 2>&1 | grep -F "| tick, FP code (b_perf" || true)"
sed -i '/^h_cprof_med_999/s/ .*/ 2.0/' "$tmp/part/6.12-part/b_tick/results"
expect_found "the tick at 0.67x perf -g: missed, the floor and what is above it" \
	"(floor 250 instr): 0.67x | <= 0.5x | **missed** (1.3x the target): both pay the floor (250 instr, 0.17x of perf's); above it 750 instr against 1250 instr, 0.60x |" \
	"$("$sum" "$tmp/part/6.12-part" 2>&1 | grep -F "| tick, FP code (b_perf" || true)"
# perf -g on the same code as fptab (perffp): compared with it
echo 'perffp.median_us 2.4' >>"$tmp/part/6.12-part/b_unwind/results"
expect_found "FP code with tables against perf -g on the same code" \
	"against perf -g on the same code | 6.12-part | 450 instr against 1200 instr: 0.38x" \
	"$("$sum" "$tmp/part/6.12-part" 2>&1 | grep -F "| tick, FP code with tables" || true)"
sed -i '/^perffp/d' "$tmp/part/6.12-part/b_unwind/results"
sed -i '/^ICOUNT=/d' "$tmp/part/6.12-part/vm.env"
expect_found "vm.env without ICOUNT=: us, the clock not recorded" "0.900 us against 3.000 us" \
	"$("$sum" "$tmp/part/6.12-part" 2>&1 | grep -F "2026-01-02, clock not recorded |" || true)"
expect_found "-icount shift=1: an instruction is 2 ns" "450 instr against 1500 instr" \
	"$(row "$out" "tick, FP code with tables")"

# every target missed, by a given amount; runs that swing across 1 %;
# bare runs slower than cprof's (the clock jumped while the guest waited)
results "$tmp/bad/6.1-bad" 0 2.5 4.5 990 "1000 1000" "1100 1200"
results "$tmp/bad/6.12-swing" "" 2.5 4.5 990 "1000 1100" "1000 1100"
results "$tmp/bad/6.13-slowbare" 0 2.5 4.5 990 "1500 6000" "1000 1000"
printf '%s\n' 't_nosym_ms 50' 't_second_ms 100' 't_report_ms 800' >"$tmp/bad/6.1-bad/b_dump/results"
printf '%s\n' 'minutes 30' 'windows 1800' 'samples 1000' 'late 52' >"$tmp/bad/6.1-bad/b_soak/results"
out=$("$sum" "$tmp/bad/6.1-bad" "$tmp/bad/6.12-swing" "$tmp/bad/6.13-slowbare" 2>&1) ||
	not_ok "summary.sh failed on bad figures: $out"
expect_found "FP code with tables at 0.83x perf -g: missed by 2.4x, and why" \
	"**missed** (2.4x the target): the frame-pointer walk alone (fpfp, no tables) costs 2000 instr, 0.67x of perf's; the tables add 500 instr, their stacks going on below main (112 bytes a sample against 96); the floor alone is 0.17x |" \
	"$(row "$out" "tick, FP code with tables" | grep 6.1-bad)"
expect_found "tables on -O2 code at 0.5x dwarf: missed by 5.0x, and why" \
	"**missed** (5.0x the target): perf's sample copies the stack, perf report unwinds it (300 M instr against cprof-dump's 40 M instr on these captures); the floor alone is 0.06x |" \
	"$(row "$out" "tick, tables on -O2 code" | grep 6.1-bad)"
expect_found "off-CPU above bcc's: missed, and the record's own share of it" \
	"**missed** (20.0x the target): recording itself, by the module's clock, 3000 instr (0.59x of bcc's whole event); the other 47505 instr: the probe on the switches not recorded" \
	"$(row "$out" "off-CPU" | grep 6.1-bad)"
expect_found "second conversion at 2x --no-symbolize: missed by 1.3x" "2.00x | <= 1.5x | **missed** (1.3x the target)" \
	"$(row "$out" "second conversion" | grep 6.1-bad)"
expect_found "5.2 % of samples outside their window: missed, no RSS from a run that failed first" \
	"52 of 1000 (5.20 %), 1800 windows | <= 1 % | **missed** (5.2x the target)" \
	"$(row "$out" "samples outside their window" | grep 6.1-bad)"
expect_found "perf report 8x the second conversion: missed" "8.0x faster | >= 10x | **missed** (1.2x short)" \
	"$(row "$out" "conversion against perf" | grep 6.1-bad)"
expect_found "job 10 to 20 % slower at 99 Hz: missed" "**missed** (at least 9.0 points over)" \
	"$(row "$out" "job slowdown at 99 Hz" | grep 6.1-bad)"
expect_found "job runs on both sides of 1 %: not decided" "not decided" \
	"$(row "$out" "job slowdown at 99 Hz" | grep 6.12-swing)"
expect_found "bare runs far slower than cprof's: not decided" "not decided" \
	"$(row "$out" "job slowdown at 99 Hz" | grep 6.13-slowbare)"
expect_found "without -icount: us, wall clock" "2.500 us against 3.000 us" \
	"$(row "$out" "tick, FP code with tables" | grep '6.12-swing.*wall clock')"
expect_found "rows of both kernels" "6.12-swing" "$(row "$out" "first tick")"

# b_slowdown's rounds, where it ran, take the slowdown rows from b_perf's
# runs: met when the whole interval is within 1 %, missed when all of it
# is over, else not decided
slowdown() { # DIR F MEDIAN LO HI
	mkdir -p "$1/b_slowdown"
	printf '%s\n' 'rounds 8' "cprof_$2_median $3" "cprof_$2_lo $4" "cprof_$2_hi $5" \
		"cprof_$2_cpu_ms 120" "cprof_$2_job_ms 3000" "perf_$2_median 1.0300" "perf_$2_lo 1.0100" \
		"perf_$2_hi 1.0500" "perf_$2_cpu_ms 400" "perf_$2_job_ms 3100" >>"$1/b_slowdown/results"
}
results "$tmp/abba/6.1-met" 0 0.9 0.8 500 "1000 1000" "1100 1200"
slowdown "$tmp/abba/6.1-met" 99 1.0020 0.9990 1.0080
slowdown "$tmp/abba/6.1-met" 999 1.0500 1.0400 1.0600
results "$tmp/abba/6.1-over" 0 0.9 0.8 500 "1000 1000" "1002 1002"
slowdown "$tmp/abba/6.1-over" 99 1.0400 1.0250 1.0600
results "$tmp/abba/6.1-open" 0 0.9 0.8 500 "1000 1000" "1002 1002"
slowdown "$tmp/abba/6.1-open" 99 1.0050 0.9900 1.0200
out=$("$sum" "$tmp/abba/6.1-met" "$tmp/abba/6.1-over" "$tmp/abba/6.1-open" 2>&1) ||
	not_ok "summary.sh failed on b_slowdown figures: $out"
expect_found "b_slowdown: its interval within 1 %: met, though b_perf's runs miss" \
	"| +0.2 % (95 % interval -0.1 % to +0.8 %, 8 ABBA rounds); cprof-dump used 120 M instr of CPU a run (jobs of 3000 M instr); perf record +3.0 % (+1.0 % to +5.0 %), 400 M instr of CPU a run | <= 1 % | met |" \
	"$(row "$out" "job slowdown at 99 Hz (b_slowdown)" | grep 6.1-met)"
expect_found "b_slowdown: 999 Hz has no target" "| +5.0 % (95 % interval +4.0 % to +6.0 %" \
	"$(row "$out" "job slowdown at 999 Hz (b_slowdown)" | grep 6.1-met)"
expect_found "b_slowdown: the whole interval over 1 %: missed" "**missed** (at least 1.5 points over)" \
	"$(row "$out" "job slowdown at 99 Hz" | grep 6.1-over)"
expect_found "b_slowdown: an interval across 1 %: not decided" "not decided: the interval holds the target" \
	"$(row "$out" "job slowdown at 99 Hz" | grep 6.1-open)"
sed -i '/^ICOUNT=/s/=.*/=/' "$tmp/abba/6.1-over/vm.env"
expect_found "b_slowdown in wall clock: CPU in ms" "cprof-dump used 120 ms of CPU a run (jobs of 3000 ms)" \
	"$("$sum" "$tmp/abba/6.1-over" 2>&1 | grep -F "job slowdown at 99 Hz" || true)"
expect_none "b_slowdown: no b_perf slowdown row beside it" "$(row "$out" "job slowdown at 99 Hz (b_perf)")"

# abba.awk: each round's ratio (B1 + B2) / (A1 + A2), their median, and
# an interval that holds it; the same rounds, the same interval
abba=$(printf '%s\n' '100 101 102 100' '100 99 101 101' '# note' '' '100 103 101 99' \
	'100 100 100 100' '100 102 102 100' '100 101 100 100' '100 104 103 101' '100 100 101 100' |
	awk -f tests/bench/abba.awk)
expect_found "abba.awk: 8 rounds' ratios" "ratios 1.0150,0.9950,1.0251,1.0000,1.0200,1.0050,1.0299,1.0050" "$abba"
expect_found "abba.awk: the median of an even count" "median 1.0100" "$abba"
lo=$(awk '$1 == "lo" { print $2 }' <<<"$abba") hi=$(awk '$1 == "hi" { print $2 }' <<<"$abba")
if awk -v l="$lo" -v h="$hi" 'BEGIN { exit !(l <= 1.01 && 1.01 <= h && l >= 0.995 && h <= 1.0299 && l < h) }'; then
	ok "abba.awk: the interval $lo to $hi holds the median, within the ratios"
else
	not_ok "abba.awk: interval $lo to $hi: $abba"
fi
expect_found "abba.awk: the same rounds, the same interval" "$(grep '^lo\|^hi' <<<"$abba")" \
	"$(printf '%s\n' '100 101 102 100' '100 99 101 101' '100 103 101 99' '100 100 100 100' \
		'100 102 102 100' '100 101 100 100' '100 104 103 101' '100 100 101 100' | awk -f tests/bench/abba.awk)"
if err=$(printf '100 1x 100 100\n' | awk -f tests/bench/abba.awk 2>&1); then
	not_ok "abba.awk took a line that is not four times: $err"
else
	expect_found "abba.awk: a bad line named, exit non-zero" "line 1: not four positive times" "$err"
fi

report
