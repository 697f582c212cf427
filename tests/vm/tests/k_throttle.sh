#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# k_throttle: no frequency can lock the machine up.  At the highest
# frequency (100 kHz) with a 5% handler budget the sampler lengthens its
# period on its own, says so in the stream (THROTTLE records) and in stats,
# and a workload still gets most of the CPU.
# vm-timeout: 150
set -euo pipefail
# shellcheck source=../lib/kprof.sh
. "$REPO/tests/vm/lib/kprof.sh"

kload
ctl freq=100000 budget=5 seconds=3
thr0=$(stat_of throttles)
"$WORKLOADS/cpuburn" 4 >"$OUT/burn.out" &
profile "$OUT/p.raw"
wait
thr=$(($(stat_of throttles) - thr0))
read -r nt maxp < <(awk '$1 == "T" { n++; if ($4 > m) m = $4 } END { print n + 0, m + 0 }' "$OUT/p.raw.txt")
ns=$(grep -c '^S ' "$OUT/p.raw.txt")
total=$(stat_of handler_ns_total)
ticks=$(stat_of ticks)
echo "throttles +$thr, $nt THROTTLE records, longest period $maxp ns, $ns samples in 3 s, mean handler $((total / ticks)) ns"
((thr > 0 && nt > 0)) || fail "100 kHz with a 5% budget did not throttle"
((maxp > 10000)) || fail "the period never grew past 10 us"
# With the budget respected, 2 CPUs x 3 s cannot hold 600k samples.
((ns < 400000)) || fail "$ns samples: the rate was not lowered"
grep -q "rounds" "$OUT/burn.out" || fail "cpuburn did not finish"
echo "k_throttle: ok"
