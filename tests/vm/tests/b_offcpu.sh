#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# b_offcpu: what recording where tasks leave the CPU costs a workload that
# does little else: pingpong's round trips per second (two threads passing
# a byte through two pipes, both on CPU 0: each round trip is two context
# switches), 3 s a run, in rounds of:
#   - none: no profile;
#   - cprof: a kind=offcpu profile of the machine at the default budget,
#     its stream read by cat (the module's cost alone);
#   - perf: perf record -e sched:sched_switch -g -a (the same events with
#     frame-pointer call chains, written to a file);
#   - bcc: BCC's offcputime -f (Debian's bpfcc-tools), if installed: every
#     switch, its stacks by frame pointers into BPF maps, folded at the
#     end.
# Printed: the median rate of each, the slowdowns (target: cprof at most
# 10 % at default settings, #21), the switches cprof recorded against
# those that happened (its budget at work), and the stream's bytes per
# recorded switch (its OFFCPU and ONCPU records).  A benchmark (make
# bench): docs/BENCHMARKS.md keeps its figures; $OUT/results has them as
# key value lines (tests/bench/summary.sh).
# vm-timeout: 2700
set -euo pipefail
# shellcheck source=../lib/kprof.sh
. "$REPO/tests/vm/lib/kprof.sh"
# shellcheck source=../lib/perfcmp.sh
. "$REPO/tests/vm/lib/perfcmp.sh"
# shellcheck source=../lib/bcc.sh
. "$REPO/tests/vm/lib/bcc.sh"

ROUNDS=${B_OFFCPU_ROUNDS:-5}
SECS=3
perf_find
trap 'perf_restore' EXIT
perf_unthrottle
kload seconds=0

rate() { taskset -c 0 "$WORKLOADS/pingpong" $SECS | awk '{ print $4 }'; }

: >"$OUT/none"; : >"$OUT/cprof"; : >"$OUT/perf"; : >"$OUT/bcc"
events=0 bytes=0 switches=0
bcc_find
for ((r = 1; r <= ROUNDS; r++)); do
	rate >>"$OUT/none"

	# bcc's offcputime (all tasks, folded)
	[[ -z $BCC ]] || with_bcc rate >>"$OUT/bcc"

	ctl kind=offcpu
	e0=$(stat_of offcpu_events)
	s0=$(awk '/^ctxt/ { print $2 }' /proc/stat)
	reader_start "$OUT/off.raw"
	rate >>"$OUT/cprof"
	reader_stop
	events=$((events + $(stat_of offcpu_events) - e0))
	switches=$((switches + $(awk '/^ctxt/ { print $2 }' /proc/stat) - s0))
	bytes=$((bytes + $(stat -c %s "$OUT/off.raw")))

	"$PERF" record -q -e sched:sched_switch -g -a -o "$OUT/perf.data" -- \
		taskset -c 0 "$WORKLOADS/pingpong" $SECS >"$OUT/perf.out" 2>"$OUT/perf.err" ||
		fail "perf record failed: $(tail -n 3 "$OUT/perf.err")"
	awk '{ print $4 }' "$OUT/perf.out" >>"$OUT/perf"
done
none=$(median <"$OUT/none")
cprof=$(median <"$OUT/cprof")
perfr=$(median <"$OUT/perf")
slow() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", 100 * (1 - a / b) }'; }
echo "pingpong round trips/s, median of $ROUNDS runs of ${SECS} s on CPU 0: none $none, cprof kind=offcpu $cprof ($(slow "$cprof" "$none")% slower), perf -e sched:sched_switch -g $perfr ($(slow "$perfr" "$none")% slower)"
if [[ -n $BCC ]]; then
	bccr=$(median <"$OUT/bcc")
	echo "bcc offcputime -f: $bccr ($(slow "$bccr" "$none")% slower)"
fi
echo "cprof recorded $events of $switches switches ($(awk -v a="$events" -v b="$switches" 'BEGIN { printf "%.1f", b ? 100 * a / b : 0 }')%), $((events ? bytes / events : 0)) stream bytes per recorded switch; stats: offcpu_ns_total $(stat_of offcpu_ns_total) offcpu_full $(stat_of offcpu_full)"
{
	echo "kernel $(uname -r)"
	echo "rate_none $none"
	echo "rate_cprof $cprof"
	echo "rate_perf $perfr"
	[[ -z $BCC ]] || echo "rate_bcc $bccr"
	echo "cprof_events $events"
	echo "switches $switches"
	echo "cprof_offcpu_ns_total $(stat_of offcpu_ns_total)"
} >"$OUT/results"
((events > 0)) || fail "no switch recorded"
rmmod cprof
