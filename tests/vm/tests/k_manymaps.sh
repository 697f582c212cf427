#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# k_manymaps: processes with tens of thousands of executable mappings.
#   - One with 20 000 (its own code mapped again and again) spinning in the
#     last one.  The module lists them without an allocation warning (the
#     harness fails the test on any), emits the one the samples fall in
#     first, then others up to 1 024 (the cap on one address space's list;
#     maps_capped counts the rest): its records in the stream are
#     hundreds, not its 20 000 (some may be emitted again), and the
#     samples resolve to manymaps_spin.
# vm-kernels: 6.1 6.12-rt
# vm-timeout: 180
set -euo pipefail
# shellcheck source=../lib/kprof.sh
. "$REPO/tests/vm/lib/kprof.sh"

kload
ctl freq=499 seconds=6
# spinning through the profile after /proc/PID/maps is read (seconds on
# the debug kernel's slow guest, where a 5 s spin once ended before it)
"$WORKLOADS/manymaps" 20000 $((5 * ${CPROF_SLOW:-1})) >"$OUT/manymaps.out" &
prog=$!
wait_lines "$OUT/manymaps.out" 1 || fail "manymaps did not start"
maps=$(grep -c ' r-xp ' "/proc/$prog/maps")
profile "$OUT/p.raw"
wait "$prog" || fail "manymaps failed"
nm=$(rawk -v p="$prog" '$1 == "M" && $M_pid == p { n++ } END { print n + 0 }' "$OUT/p.raw.txt")
capped=$(stat_of maps_capped)
"$CPROF_DUMP" -i "$OUT/p.raw" -f folded -o "$OUT/p.folded" 2>"$OUT/dump.err" ||
	fail "cprof-dump failed: $(cat "$OUT/dump.err")"
# user-mode samples (mapping 20 000 times is kernel work)
read -r n spin < <(rawk '{ split($folded_stack, fr, ";") } fr[1] == "manymaps" && !/_\[k\]/ { n += $NF; if ($folded_stack ~ /;manymaps_spin$/) s += $NF }
	END { print n + 0, s + 0 }' "$OUT/p.folded")
echo "manymaps: $maps executable mappings, $nm mapping records of it in the stream (maps_capped $capped); $n user-mode samples, $spin in manymaps_spin"
((maps > 20000)) || fail "only $maps executable mappings"
((nm > 100 && nm <= 2048)) || fail "$nm mapping records of manymaps, not 100 to 2048"
((${capped:-0} >= maps - 1024)) || fail "maps_capped is ${capped:-none}, not at least $((maps - 1024))"
# (mapping is slow under a debug kernel on a loaded host: 100 samples are
# enough for the share to mean something)
((n >= 100)) || fail "only $n user-mode samples of manymaps in the profile"
((spin * 100 >= n * 95)) || fail "only $spin of $n samples resolved to manymaps_spin"

echo "k_manymaps: ok"
