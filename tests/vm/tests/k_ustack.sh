#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# k_ustack: what a sample's stack copy (CPROF_REC_USTACK) holds when the
# stack has a hole.  stackhole (built without frame pointers) spins in a
# frameless leaf, spin(), under holed(), whose 24 KiB frame has three
# pages in its middle not in memory (given back with madvise()), as a
# function's arrays not written yet are (bzip2's mainSort()).
#   - The module's copies (the stream, read by streamtext, a loader
#     holding /proc/cprof/unwind open with one table loaded, none for
#     stackhole): stackhole's first second is copied; copies that name
#     three pages in a row in holes (a run of three bits; a page above
#     main's frame may be one too: exec leaves up to 8 KiB untouched
#     between the auxiliary vector and the strings) go on past them to
#     holed()'s return address, more than 24 KiB up; every byte of every
#     hole of every copy is 0.
#   - End to end: started once cprof-dump's profile runs, with an empty
#     table cache, stackhole's first samples' stacks are copied, and
#     cprof-dump walks the copies once its table is compiled: some samples
#     were completed from copies, and >= 99 % of stackhole's samples in
#     spin() reach main through holed(), but those whose copy the module
#     skipped (stats' ustack_skipped and budget_skipped, counted for all
#     processes: the CPU's buffer half full, the tick's accesses spent),
#     which keep the module's walk.
# With the copy ended at the first page not there, the samples copied
# before its table came kept the module's walk, spin() under junk: 0 of
# 386 reached main, 404 copies "ended before the walk did".
# vm-kernels: 6.12 6.1-rt
# vm-timeout: 240
set -euo pipefail
# shellcheck source=../lib/kprof.sh
. "$REPO/tests/vm/lib/kprof.sh"

[[ -x $CPROF_DUMP ]] || fail "no cprof-dump at $CPROF_DUMP"
# 8 MiB rings: a copy is taken only while the CPU's ring is half empty,
# and a reader slowed by a loaded host falls behind 32 KiB copies
kload budget=50 buffer_kb=8192
secs=$((4 * ${CPROF_SLOW:-1}))

# The module's copies, in the stream.  A loader: /proc/cprof/unwind open
# for writing, a table loaded (sleep's files').
sleep 600 &
sl=$!
"$CPROF_DUMP" --load-unwind-tables -p "$sl" 2>"$OUT/load.err" ||
	fail "cprof-dump --load-unwind-tables failed: $(cat "$OUT/load.err")"
exec 3>/proc/cprof/unwind
ctl freq=199 seconds=$((secs + 2))
cat /proc/cprof/profile >"$OUT/p.raw" &
rd=$!
wait_profiling || fail "the profile did not start"
"$WORKLOADS/stackhole" "$secs" >/dev/null || fail "stackhole failed"
wait "$rd" || fail "reading /proc/cprof/profile failed"
exec 3>&-
kill "$sl"
wait "$sl" 2>/dev/null || true
"$WORKLOADS/streamtext" <"$OUT/p.raw" >"$OUT/p.txt" || fail "p.raw is not a well-formed stream"
read -r copies holed past bad < <(rawk '
$1 == "S" && $S_comm == "stackhole" { mine[$S_tid] = 1 }
$1 == "U" && ($U_tid in mine) {
	n++
	if (!$U_zeros) bad++
	if (run3($U_holes + 0)) { three++; if ($U_size > 24576) past++ }
}
# Some run of exactly three bits set: the other holes are pages exec left
# untouched in the random gap above the auxiliary vector.
function run3(h,  run, bit) {
	for (run = 0; h > 0; h = (h - bit) / 2) {
		bit = h % 2
		if (bit) run++
		else if (run == 3) return 1
		else run = 0
	}
	return run == 3
}
END { print n + 0, three + 0, past + 0, bad + 0 }' "$OUT/p.txt")
echo "stackhole's copies: $copies; with three pages in a row in holes: $holed, of them $past past 24 KiB; copies with a byte not 0 in a hole: $bad"
((bad == 0)) || fail "$bad copies hold bytes other than 0 in their holes"
((holed >= 10)) || fail "only $holed of stackhole's $copies copies name its three pages as holes"
((past == holed)) || fail "only $past of the $holed copies with the hole go past it to holed()'s return address"
rmmod cprof
kload budget=50 buffer_kb=8192

# End to end.
cache=$(mktemp -d)
"$CPROF_DUMP" -d 60 -F 199 --table-cache "$cache" -f folded \
	-o "$OUT/hole.folded" 2>"$OUT/hole.err" &
dump=$!
wait_profiling || fail "cprof-dump's profile did not start: $(cat "$OUT/hole.err")"
"$WORKLOADS/stackhole" "$secs" >/dev/null || fail "stackhole failed"
ctl stop=1
wait "$dump" || fail "cprof-dump failed: $(cat "$OUT/hole.err")"
cat "$OUT/hole.err"
skipped=$(($(stat_of ustack_skipped) + $(stat_of budget_skipped)))
echo "stack copies taken: $(stat_of ustack_copies), skipped: $(stat_of ustack_skipped) (buffer), $(stat_of budget_skipped) (accesses)"

# "stack copies: N samples completed from them, M left ...", said only
# when some copy was left as the module walked it.  Without it, every
# copy that came with its sample was completed: as many as were taken.
taken=$(stat_of ustack_copies)
if grep -q 'stack copies: [0-9]* samples completed from them' "$OUT/hole.err"; then
	done_copies=$(sed -n 's/.*stack copies: \([0-9]*\) samples completed from them.*/\1/p' "$OUT/hole.err" | tail -n 1)
	short=$(sed -n 's/.* (\([0-9]*\) copies that ended before the walk did.*/\1/p' "$OUT/hole.err" | tail -n 1)
else
	done_copies=$taken short=0
fi
echo "samples completed from stack copies: $done_copies of $taken taken; copies that ended before the walk did: $short"
((done_copies > 0)) || fail "no sample was completed from a stack copy: the test did not test the copies"

# folded: "comm;root;...;leaf count"
read -r total reach < <(awk '{
	c = $NF; s = substr($0, 1, length($0) - length(c) - 1)
	if (s !~ /^stackhole;/ || s !~ /;spin(;|$)/) next
	t += c
	if (s ~ /;main;holed;spin(;|$)/) r += c
} END { print t + 0, r + 0 }' "$OUT/hole.folded")
echo "stackhole: $reach of $total samples in spin() reach main"
((total - skipped >= 100)) ||
	fail "only $total stackhole samples in spin(), $skipped copies skipped"
((reach * 100 >= (total - skipped) * 99)) || {
	grep '^stackhole;' "$OUT/hole.folded" | grep -v ';main;holed;spin' | sort -t' ' -k2,2nr | head -n 5
	fail "$reach of $total samples in spin() reach main ($skipped copies skipped), want >= 99% of the others"
}
rm -rf "$cache"
echo "k_ustack: ok"
