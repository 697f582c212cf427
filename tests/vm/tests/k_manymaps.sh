#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# k_manymaps: a process with 20 000 executable mappings (its own code
# mapped again and again) spinning in the last one.  The module lists them
# without an allocation warning (the harness fails the test on any), emits
# the one the samples fall in first (the rest follow as room allows), and
# the samples resolve to manymaps_spin.
# vm-timeout: 180
set -euo pipefail
# shellcheck source=../lib/kprof.sh
. "$REPO/tests/vm/lib/kprof.sh"

kload
ctl freq=499 seconds=6
"$WORKLOADS/manymaps" 20000 5 >"$OUT/manymaps.out" &
prog=$!
wait_lines "$OUT/manymaps.out" 1 || fail "manymaps did not start"
maps=$(grep -c ' r-xp ' "/proc/$prog/maps")
profile "$OUT/p.raw"
wait "$prog" || fail "manymaps failed"
nm=$(awk '$1 == "M" { n++ } END { print n + 0 }' "$OUT/p.raw.txt")
"$CPROF_DUMP" -i "$OUT/p.raw" -f folded -o "$OUT/p.folded" 2>"$OUT/dump.err" ||
	fail "cprof-dump failed: $(cat "$OUT/dump.err")"
# user-mode samples (mapping 20 000 times is kernel work)
read -r n spin < <(rawk '{ split($folded_stack, fr, ";") } fr[1] == "manymaps" && !/_\[k\]/ { n += $NF; if ($folded_stack ~ /;manymaps_spin$/) s += $NF }
	END { print n + 0, s + 0 }' "$OUT/p.folded")
echo "manymaps: $maps executable mappings, $nm mapping records in the stream; $n user-mode samples, $spin in manymaps_spin"
((maps > 20000)) || fail "only $maps executable mappings"
((nm > 1000)) || fail "only $nm mapping records"
# (mapping is slow under a debug kernel on a loaded host: 100 samples are
# enough for the share to mean something)
((n >= 100)) || fail "only $n user-mode samples of manymaps in the profile"
((spin * 100 >= n * 95)) || fail "only $spin of $n samples resolved to manymaps_spin"
echo "k_manymaps: ok"
