#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# k_ustack: what a sample's stack copy (CPROF_REC_USTACK) holds when the
# stack has a hole.  stackhole (built without frame pointers) spins in a
# frameless leaf, spin(), under holed(), whose frame has three pages in
# its middle not in memory (given back with madvise()), as a function's
# arrays not written yet are (bzip2's mainSort()).  Started once
# cprof-dump's profile runs, with an empty table cache, its first
# samples' stacks are copied, and cprof-dump walks the copies once its
# table is compiled; those samples reach main only if the copy read the
# hole as zeros and went on to holed()'s return address above it.
#   - some samples were completed from copies (cprof-dump says how many);
#   - >= 99 % of stackhole's samples in spin() reach main, through holed(),
#     but those whose copy the module skipped (stats' ustack_skipped and
#     budget_skipped: the CPU's buffer half full, the tick's accesses
#     spent; counted for all processes), which keep the module's walk.
# With the copy ended at the first page not there, the samples copied
# before its table came kept the module's walk, spin() under junk: 215
# of 1 340 reached main, 1 145 copies "ended before the walk did".
# vm-kernels: 6.12 6.1-rt
# vm-timeout: 240
set -euo pipefail
# shellcheck source=../lib/kprof.sh
. "$REPO/tests/vm/lib/kprof.sh"

[[ -x $CPROF_DUMP ]] || fail "no cprof-dump at $CPROF_DUMP"
# 8 MiB rings: a copy is taken only while the CPU's ring is half empty,
# and a reader slowed by a loaded host falls behind 32 KiB copies
kload budget=50 buffer_kb=8192
cache=$(mktemp -d)
"$CPROF_DUMP" -d 60 -F 199 --table-cache "$cache" -f folded \
	-o "$OUT/hole.folded" 2>"$OUT/hole.err" &
dump=$!
wait_profiling || fail "cprof-dump's profile did not start: $(cat "$OUT/hole.err")"
"$WORKLOADS/stackhole" 4 >/dev/null || fail "stackhole failed"
ctl stop=1
wait "$dump" || fail "cprof-dump failed: $(cat "$OUT/hole.err")"
cat "$OUT/hole.err"
skipped=$(($(stat_of ustack_skipped) + $(stat_of budget_skipped)))
echo "stack copies taken: $(stat_of ustack_copies), skipped: $(stat_of ustack_skipped) (buffer), $(stat_of budget_skipped) (accesses)"

# "N samples completed from them": the copies walked with tables
done_copies=$(sed -n 's/.*stack copies: \([0-9]*\) samples completed from them.*/\1/p' "$OUT/hole.err" | tail -n 1)
short=$(sed -n 's/.* (\([0-9]*\) copies that ended before the walk did.*/\1/p' "$OUT/hole.err" | tail -n 1)
echo "samples completed from stack copies: ${done_copies:-0}; copies that ended before the walk did: ${short:-0}"
((${done_copies:-0} > 0)) || fail "no sample was completed from a stack copy: the test did not test the copies"

# folded: "comm;root;...;leaf count"
read -r total reach < <(awk '{
	c = $NF; s = substr($0, 1, length($0) - length(c) - 1)
	if (s !~ /^stackhole;/ || s !~ /;spin(;|$)/) next
	t += c
	if (s ~ /;main;holed;spin(;|$)/) r += c
} END { print t + 0, r + 0 }' "$OUT/hole.folded")
echo "stackhole: $reach of $total samples in spin() reach main"
((total - skipped >= 200)) ||
	fail "only $total stackhole samples in spin(), $skipped copies skipped"
((reach * 100 >= (total - skipped) * 99)) || {
	grep '^stackhole;' "$OUT/hole.folded" | grep -v ';main;holed;spin' | sort -t' ' -k2,2nr | head -n 5
	fail "$reach of $total samples in spin() reach main ($skipped copies skipped), want >= 99% of the others"
}
rm -rf "$cache"
echo "k_ustack: ok"
