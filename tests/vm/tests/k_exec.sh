#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# k_exec: an exec into another binary mapped at the same addresses (two
# programs without PIE, both at 0x401000) keeps one pid.  Each mapping
# record carries the time of the sample that asked for it, so every sample
# resolves against the binary that ran at its time: exec_first's samples
# never name second_spin, exec_second's never first_spin.
# vm-kernels: 6.12 6.1-rt
# vm-timeout: 120
set -euo pipefail
# shellcheck source=../lib/kprof.sh
. "$REPO/tests/vm/lib/kprof.sh"

kload
ctl freq=999 seconds=5
"$WORKLOADS/exec_first" 1.5 "$WORKLOADS/exec_second" &
prog=$!
profile "$OUT/p.raw"
wait "$prog" || fail "exec_first/exec_second failed"
"$CPROF_DUMP" -i "$OUT/p.raw" -f folded -o "$OUT/p.folded" 2>"$OUT/dump.err" ||
	fail "cprof-dump failed: $(cat "$OUT/dump.err")"
# per comm: samples, samples in its own spin, in the other's
read -r f_n f_own f_other s_n s_own s_other < <(rawk '
	{ n = $NF; split($folded_stack, fr, ";") }
	fr[1] == "exec_first" { fn += n; if (/;first_spin/) fo += n; if (/;second_spin/) fx += n }
	fr[1] == "exec_second" { sn += n; if (/;second_spin/) so += n; if (/;first_spin/) sx += n }
	END { print fn + 0, fo + 0, fx + 0, sn + 0, so + 0, sx + 0 }' "$OUT/p.folded")
echo "exec_first: $f_n samples, $f_own in first_spin, $f_other in second_spin"
echo "exec_second: $s_n samples, $s_own in second_spin, $s_other in first_spin"
# (the debug kernel's throttled ticks gave exec_first 55 in 1.5 s)
((f_own >= 40 && s_own >= 40)) || fail "too few samples in the spin functions"
((f_other == 0 && s_other == 0)) || fail "samples resolved against the binary of another time"
echo "k_exec: ok"
