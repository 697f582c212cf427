#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# b_worst: the worst one event costs, against its bound (ctl accesses=).
# A wall profile (ticks and recorded switches; cprof-dump -d loads tables,
# so young programs' stacks are copied) of deepswitch (two threads
# blocking 127 C frames deep, no frame pointers), a python3.11 spinning
# 120 Python calls deep and cpuburn, all started during the profile,
# until both 10 000 ticks and 10 000 recorded switches were taken; once
# at the default budget (256) and once at the most ctl takes (4096), the
# module reloaded before each so that its maxima are that budget's.
# Printed per budget: the most user accesses a tick and a recorded switch
# made (accesses_max, offcpu_accesses_max), and the longest of each
# (handler_ns_max, offcpu_ns_max): under --icount 0 (one CPU, the guest's
# clock a nanosecond an instruction) those count instructions.  Fails if
# an event passed its budget.  A benchmark (make bench); the figures go to
# docs/BENCHMARKS.md ("A hard bound per event").
#   tests/vm/run.sh --kernel 6.1 --icount 0 b_worst
# vm-timeout: 1500
set -euo pipefail
# shellcheck source=../lib/kprof.sh
. "$REPO/tests/vm/lib/kprof.sh"

PY=/usr/bin/python3.11
[[ -x $PY ]] || fail "no $PY (Debian's python3.11)"
[[ -x $CPROF_DUMP ]] || fail "no cprof-dump at $CPROF_DUMP"
EVENTS=10000
LOCAL=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$LOCAL"' EXIT

for budget in 256 4096; do
	rmmod cprof 2>/dev/null || true
	kload freq=999 budget=50 accesses="$budget"
	"$CPROF_DUMP" -d 3000 --kind wall -f folded -o "$OUT/worst$budget.folded" \
		2>"$OUT/worst$budget.err" &
	dump=$!
	wait_profiling || fail "the profile did not start"
	t0=$(stat_of ticks)
	s0=$(stat_of offcpu_events)
	"$WORKLOADS/deepswitch" 3000 127 >"$LOCAL/ds.out" &
	work=($!)
	"$WORKLOADS/cpuburn" 3000 >/dev/null &
	work+=($!)
	"$PY" -S "$REPO/tests/vm/lib/pydeep.py" 3000 >"$LOCAL/py.out" &
	work+=($!)
	while :; do
		ticks=$(($(stat_of ticks) - t0))
		switches=$(($(stat_of offcpu_events) - s0))
		((ticks < EVENTS || switches < EVENTS)) || break
		kill -0 "$dump" 2>/dev/null || fail "cprof-dump ended: $(tail -n 3 "$OUT/worst$budget.err")"
		sleep 1
	done
	ctl stop=1
	wait "$dump" || fail "cprof-dump failed: $(tail -n 3 "$OUT/worst$budget.err")"
	kill "${work[@]}"
	wait "${work[@]}" || true
	am=$(stat_of accesses_max)
	om=$(stat_of offcpu_accesses_max)
	echo "accesses=$budget: $ticks ticks, $switches recorded switches;" \
		"most accesses a tick $am, a switch $om;" \
		"longest tick $(stat_of handler_ns_max) ns, longest switch $(stat_of offcpu_ns_max) ns" \
		"(under --icount 0: instructions); walks cut: ticks $(stat_of budget_truncated)," \
		"switches $(stat_of offcpu_budget_truncated); copies or code records left out $(stat_of budget_skipped)"
	((am <= budget && om <= budget)) ||
		fail "accesses=$budget: a tick made $am user accesses, a switch $om"
done
echo "b_worst: ok"
