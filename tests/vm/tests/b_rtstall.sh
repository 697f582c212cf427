#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# b_rtstall: how long a recorded switch holds its CPU up.  The off-CPU
# probe records a task's stacks in the scheduler, interrupts off and the
# runqueue locked: for that long a timer interrupt on the CPU waits, and on
# PREEMPT_RT a wake-up aimed at it spins.  cyclictest (rt-tests) measures
# exactly that: a SCHED_FIFO thread on CPU 1 woken every 500 us by its
# timer, the latency of each wake-up, while deepswitch's two threads
# switch on CPU 1 as fast as pipes let them, each 200 frames deep without
# frame pointers and its tables loaded: every recorded switch walks 127
# user frames through the tables, the longest walk the probe does.
# ROUNDS rounds of SECS s each of:
#   - none: no profile;
#   - cprof: a kind=offcpu profile of the machine, its stream read by cat
#     into the guest's tmpfs (a file on the host's 9p share would cost
#     the guest's CPUs the host's I/O, which is not the probe's);
#   - bcc: BCC's offcputime -f, if installed.
# Printed: cyclictest's average and worst latency per mode (the worst over
# the rounds), the longest recorded switch (offcpu_ns_max), and the
# switches recorded.  Under TCG every figure is slower than on hardware;
# the comparison is side by side in one guest.  A benchmark (make bench):
# docs/BENCHMARKS.md keeps its figures.
# vm-timeout: 900
set -euo pipefail
# shellcheck source=../lib/kprof.sh
. "$REPO/tests/vm/lib/kprof.sh"
# shellcheck source=../lib/bcc.sh
. "$REPO/tests/vm/lib/bcc.sh"

ROUNDS=${B_RTSTALL_ROUNDS:-3}
SECS=8
CYC=$(command -v cyclictest || true)
[[ -n $CYC ]] || fail "cyclictest not found (tests/deps.sh installs rt-tests)"
[[ -d /sys/devices/system/cpu/cpu1 ]] || fail "needs a second CPU"
rt=no
uname -v | grep -q PREEMPT_RT && rt=yes

kload seconds=0
# for as long as the rounds take (bcc compiles its programs for minutes)
taskset -c 1 "$WORKLOADS/deepswitch" 3600 200 >"$OUT/deep.out" &
deep=$!
LOCAL=$(mktemp -d)
trap 'kill $deep 2>/dev/null || true; rm -rf "$LOCAL"' EXIT
sleep 1
"$CPROF_DUMP" --load-unwind-tables 2>"$OUT/load.err" ||
	fail "loading the running programs' tables failed: $(cat "$OUT/load.err")"
tail -n 1 "$OUT/load.err"

# one cyclictest run: "AVG MAX" in microseconds
cyc() {
	"$CYC" -q -m -t 1 -a 1 -p 95 -i 500 -D "$SECS" 2>"$OUT/cyc.err" |
		awk '/^T:/ { for (i = 1; i <= NF; i++) { if ($i == "Avg:") a = $(i + 1); if ($i == "Max:") m = $(i + 1) } }
		     END { if (m == "") exit 1; print a, m }' ||
		fail "cyclictest failed: $(cat "$OUT/cyc.err")"
}

: >"$OUT/none"; : >"$OUT/cprof"; : >"$OUT/bcc"
bcc_find
events=0
for ((r = 1; r <= ROUNDS; r++)); do
	cyc >>"$OUT/none"

	ctl kind=offcpu
	e0=$(stat_of offcpu_events)
	reader_start "$LOCAL/off.raw"
	cyc >>"$OUT/cprof"
	reader_stop
	events=$((events + $(stat_of offcpu_events) - e0))

	[[ -z $BCC ]] || with_bcc cyc >>"$OUT/bcc"
done
kill "$deep" 2>/dev/null || true
wait "$deep" 2>/dev/null || true

# the last round's stream: how deep the recorded stacks of deepswitch were
"$CPROF_DUMP" -i "$LOCAL/off.raw" -f folded -o "$OUT/off.folded" 2>"$OUT/dump.err" ||
	fail "cprof-dump could not read the off-CPU stream: $(cat "$OUT/dump.err")"
deepest=$(awk '/^deepswitch;/ { n = gsub(/;descend/, ""); if (n > m) m = n } END { print m + 0 }' "$OUT/off.folded")

summ() { # FILE: "average A us, worst M us"
	awk '{ a += $1; if ($2 > m) m = $2 } END { printf "average %.0f us, worst %d us", a / NR, m }' "$1"
}
echo "PREEMPT_RT: $rt; cyclictest on CPU 1 (SCHED_FIFO 95, every 500 us), deepswitch switching there, $ROUNDS runs of $SECS s:"
echo "  none:  $(summ "$OUT/none")"
echo "  cprof: $(summ "$OUT/cprof") (kind=offcpu)"
[[ -z $BCC ]] || echo "  bcc:   $(summ "$OUT/bcc") (offcputime -f)"
echo "cprof recorded $events switches; the longest took $(stat_of offcpu_ns_max) ns (offcpu_ns_max), total $(stat_of offcpu_ns_total) ns; the deepest deepswitch stack held $deepest descend frames"
((events > 0)) || fail "no switch recorded"
max=$(stat_of offcpu_ns_max)
((max > 0 && max <= $(stat_of offcpu_ns_total))) || fail "offcpu_ns_max $max is not within the time recording took"
((deepest >= 100)) || fail "deepswitch's recorded stacks are $deepest frames of descend deep, not the walk this measures"
rmmod cprof
