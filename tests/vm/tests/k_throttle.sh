#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# k_throttle: no setting can lock the machine up.  At the highest
# frequency (100 kHz), with a 5 % budget and with the highest budget ctl
# accepts (50 %), the sampler lengthens its period on its own, says so in
# the stream (THROTTLE records) and in stats, and a workload and the shell
# still get their CPU.  A budget over the highest is refused.
# vm-kernels: 6.1 6.12-rt
# vm-timeout: 200
set -euo pipefail
# shellcheck source=../lib/kprof.sh
. "$REPO/tests/vm/lib/kprof.sh"

kload
if printf 'budget=51\n' >/proc/cprof/ctl 2>/dev/null; then
	fail "ctl accepted budget=51"
fi
for budget in 5 50; do
	ctl freq=100000 budget=$budget seconds=3
	thr0=$(stat_of throttles)
	h0=$(stat_of handler_ns_total)
	o0=$(stat_of overhead_ns_total)
	t0=$(stat_of ticks)
	"$WORKLOADS/cpuburn" 4 >"$OUT/burn$budget.out" &
	profile "$OUT/p$budget.raw" &
	prof=$!
	wait_profiling || fail "the profile did not start"
	# the shell stays usable: 2000 rounds of builtins, timed
	s0=${EPOCHREALTIME/./}
	for ((i = 0; i < 2000; i++)); do
		: $((i * i))
	done
	shell_ms=$(((${EPOCHREALTIME/./} - s0) / 1000))
	wait "$prof"
	wait
	thr=$(($(stat_of throttles) - thr0))
	ticks=$(($(stat_of ticks) - t0))
	handler=$(($(stat_of handler_ns_total) - h0))
	overhead=$(($(stat_of overhead_ns_total) - o0))
	read -r nt maxp < <(rawk '$1 == "T" { n++; if ($T_period_ns > m) m = $T_period_ns } END { print n + 0, m + 0 }' "$OUT/p$budget.raw.txt")
	ns=$(grep -c '^S ' "$OUT/p$budget.raw.txt")
	echo "budget $budget%: throttles +$thr, $nt THROTTLE records, longest period $maxp ns, $ns samples in 3 s;" \
		"mean handler $((handler / (ticks ? ticks : 1))) ns + estimated entry/exit $((overhead / (ticks ? ticks : 1))) ns;" \
		"2000 shell rounds in $shell_ms ms"
	((thr > 0 && nt > 0)) || fail "100 kHz with a $budget% budget did not throttle"
	((maxp > 10000)) || fail "budget $budget%: the period never grew past 10 us"
	# With the budget respected, 2 CPUs x 3 s cannot hold 600k samples.
	((ns < 400000)) || fail "budget $budget%: $ns samples: the rate was not lowered"
	grep -q "rounds" "$OUT/burn$budget.out" || fail "budget $budget%: cpuburn did not finish"
	((shell_ms < $(slow_ms 5000))) || fail "budget $budget%: the shell took $shell_ms ms for 2000 rounds"
done
echo "k_throttle: ok"
