#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# p_flat: cprof against perf on the same run of the same workloads: perf
#   record -a -e cpu-clock -F 999 -g and cprof at 997 Hz sample together
#   while cpuburn (user mode: leaf1:leaf2:leaf3 = 1:2:4) and readzero
#   (mostly kernel mode, under read()) run 8 s side by side.
#   - flat (self) profile of each workload, per function: the leaves of
#     perf script's call chains (what perf report --no-children --sort sym
#     counts) against the leaves of cprof-dump -f folded, both without the
#     samples taken in interrupt or switch work (an interrupt entry,
#     softirqs, the exit work after one or a context switch on the stack:
#     IRQ_RE in lib/perfcmp.sh), where each profiler sees the other's ticks;
#     the L1 distance of the two share vectors (functions under 2% in both
#     lumped together) is at most 10 points.  Sampling noise alone, with
#     the >= 2000 samples a side required, stays under about 5; a wrong
#     leaf (a return address taken for the ip), lost kernel or user
#     samples, unsymbolized user code or a skewed tick move whole tens of
#     points.
#   - Why one run and not two back to back: under TCG the kernel's hot loop
#     splits its time between read_zero and rep_stos_alternative differently
#     from one run to the next (perf against perf, back to back: up to 32
#     points apart), so only a shared run compares the profilers.  Why 997
#     and not 999 Hz: at one period the two per-CPU timers keep a fixed
#     phase, and if that puts one's tick in the interrupt exit work of the
#     other's every time, it sees nothing else; 2 Hz apart they drift.
#   - If an L1 distance is over 10, the whole capture is taken once more
#     and the second must pass (see attempt below).
#   - the share of samples in interrupt and switch work and the whole flat
#     profile are printed, not asserted;
#   - readzero's kernel-mode samples (leaf in the kernel): the share with
#     user frames too is at least 90% and at most 5 points under perf's.
# vm-long: a side-by-side with an anchor (make check-long)
# vm-timeout: 300
set -euo pipefail
# shellcheck source=../lib/kprof.sh
. "$REPO/tests/vm/lib/kprof.sh"
# shellcheck source=../lib/perfcmp.sh
. "$REPO/tests/vm/lib/perfcmp.sh"

[[ -x $CPROF_DUMP ]] || skip "no cprof-dump ($CPROF_DUMP)"
perf_find
trap perf_restore EXIT
perf_unthrottle
t0=$(now_ms)
phase() {
	echo "-- $(($(now_ms) - t0)) ms: $*"
}

# budget=50, the highest: cprof throttles itself only past half a CPU, as
# perf does not at all (perf_unthrottle): under TCG both handlers take tens
# of microseconds.
kload budget=50
# The captures go to the guest's tmpfs: perf record -a writing to the 9p
# results folder under TCG falls behind its own samples of itself and never
# catches up.
W=$(mktemp -d)
ctl freq=997 seconds=60
# cprof's reader copies the stream while the workloads run (with_reader);
# perf record -a runs that as its command, so neither profiler's start-up
# or teardown (perf's takes seconds under TCG) overlaps the other's
# sampling, and perf samples the whole of it.
workloads() {
	local b
	"$WORKLOADS/cpuburn" 8 >/dev/null &
	b=$!
	"$WORKLOADS/readzero" 8 >/dev/null
	wait "$b"
}
export WORKLOADS
export -f workloads with_reader wait_profiling stat_of
# attempt N: both profilers on one run of the workloads, then the flat
# profiles compared; worst=1 if an L1 distance is over 10 points.
attempt() {
	worst=0
	rm -f "$OUT/l1"
	phase "attempt $1"
	"$PERF" record -q -a -B -e cpu-clock -F 999 -g -o "$W/perf.data" \
		-- bash -c '"$@"' bash with_reader "$W/cprof.raw" workloads >"$W/perf.log" 2>&1 ||
		fail "perf record failed: $(tail -n 3 "$W/perf.log")"
	[[ -s $W/cprof.raw ]] || fail "reading /proc/cprof/profile failed"
	phase "recorded"
	grep -E '^(samples|lost|throttles) ' /proc/cprof/stats | tr '\n' ' '
	echo
	"$CPROF_DUMP" -i "$W/cprof.raw" -f folded -o "$OUT/cprof.folded" || fail "cprof-dump failed"
	phase "cprof-dump done"

	worst=0
	for comm in cpuburn readzero; do
		perf_flat "$W/perf.data" "$comm" >"$OUT/$comm.perf"
		cprof_flat "$OUT/cprof.folded" "$comm" >"$OUT/$comm.cprof"
		read -r pi pn < <(irq_share "$OUT/$comm.perf")
		read -r ci cn < <(irq_share "$OUT/$comm.cprof")
		echo "$comm: samples in interrupt or switch work: perf $pi of $pn, cprof $ci of $cn (not asserted)"
		flat_own "$OUT/$comm.perf" >"$OUT/$comm.perf.own"
		flat_own "$OUT/$comm.cprof" >"$OUT/$comm.cprof.own"
		flat_compare "$comm (outside interrupt and switch work)" "$OUT/$comm.perf.own" "$OUT/$comm.cprof.own"
		((FLAT_NA >= 2000)) || fail "$comm: only $FLAT_NA perf samples"
		((FLAT_NB >= 2000)) || fail "$comm: only $FLAT_NB cprof samples"
		((FLAT_L1 <= 10)) || worst=1
		echo "$comm: L1 $FLAT_L1" >>"$OUT/l1"
		# the whole flat profile, interrupt work included: printed only
		awk '{ sub(/^[a-z]+ /, ""); print }' "$OUT/$comm.perf" >"$OUT/$comm.perf.all"
		awk '{ sub(/^[a-z]+ /, ""); print }' "$OUT/$comm.cprof" >"$OUT/$comm.cprof.all"
		flat_compare "$comm (all samples; not asserted)" "$OUT/$comm.perf.all" "$OUT/$comm.cprof.all"
	done
	phase "perf script done"
}
attempt 1
if ((worst)); then
	# Under TCG the split of readzero's hot loop between read_zero and
	# the clearing routine it calls has twice come out 12 and 17 points
	# apart for the two profilers in one shared run, and 1 to 5 in the
	# runs before and after; a real fault of cprof's fails twice.
	echo "attempt 1: $(tr '\n' ' ' <"$OUT/l1")(want <= 10 points): once more"
	attempt 2
fi
((worst == 0)) || fail "flat profiles differ: $(tr '\n' ' ' <"$OUT/l1")(want <= 10 points)"

read -r pk pb < <(perf_both_share "$W/perf.data" readzero)
read -r ck cb < <(cprof_both_share "$OUT/cprof.folded" readzero)
echo "readzero kernel-mode samples with user frames too: perf $pb of $pk, cprof $cb of $ck"
((pk >= 300 && ck >= 300)) || fail "too few readzero kernel-mode samples (perf $pk, cprof $ck)"
((cb * 100 >= ck * 90)) || fail "cprof: $cb of $ck kernel-mode samples have user frames, want >= 90%"
# cb/ck >= pb/pk - 5%
((cb * pk * 100 >= (pb * 100 - 5 * pk) * ck)) ||
	fail "cprof: $cb of $ck kernel+user, more than 5 points under perf's $pb of $pk"
echo "p_flat: ok"
