#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# k_mapsbudget: a hostile unprivileged user (nobody) against the module's
#   budget for mapping lists (maps_mb), during a seconds=0 profile with
#   unwind tables loaded: its children, each with 65 000 executable
#   mappings, spin 400 ms in a fresh anonymous page and exit, one after
#   another, HOSTILE_CHILDREN of them (default 24: about 35 s), with
#   maps_mb=1.  The module's maps_bytes stays within
#   maps_limit (stats, polled) and MemAvailable, less what the hostile
#   processes hold themselves (their VMAs and maple nodes, every slab
#   cache but kmalloc's, page tables, kernel stacks, anonymous pages;
#   MemAvailable itself dropped 18 to 68 MiB in runs of this test), drops
#   by less than that budget + 64 MiB: 0 to 42 MiB in runs here with
#   maps_bytes within 1 MiB (in one, 14 MiB of MemFree's fall was in no
#   category of /proc/meminfo: freed, not yet counted free).  A list kept whole
#   would be 3.5 MiB a child (65 000 mappings); the
#   children's samples in their pages are covered by their mapping records
#   (>= 90%); qsortsplit (no frame pointers: its stacks need its state and
#   tables) profiled alongside keeps >= 99% of its stacks reaching main.
#   Then, in a profile of 10 to 240 s, 40 more of its processes spin (at
#   nice 19), each with 1 100 mappings: their lists (a listing's 64 KiB of
#   records' worth, 32 KiB each) overflow maps_mb, the least recently
#   sampled are evicted (maps_evicted grows in that profile), and
#   maps_bytes stays within maps_limit.
#   On 6.1 only: on 6.12-rt the first eviction came 48 to 102 s into
#   the phase, the test taking 117 to 200 s, for the same code; k_maps
#   and k_manymaps run the lists there.
# vm-timeout: 540
set -euo pipefail
# shellcheck source=../lib/kprof.sh
. "$REPO/tests/vm/lib/kprof.sh"

case $(uname -r) in
*-cprof-debug) skip "not on the debug kernel: KASAN maps 65 000 pages a child tens of times slower, past the test's time (k_manymaps runs the lists there)" ;;
*-rt-* | 6.12.*) skip "runs on 6.1 only" ;;
esac
[[ -x $CPROF_DUMP ]] || fail "no cprof-dump at $CPROF_DUMP"
kload maps_mb=1
limit=$((1 << 20))
kids_want=${HOSTILE_CHILDREN:-24}
"$WORKLOADS/qsortsplit" 600 >/dev/null &
qs=$!
"$CPROF_DUMP" --load-unwind-tables -p "$qs" 2>"$OUT/load.err" ||
	fail "cprof-dump --load-unwind-tables failed: $(cat "$OUT/load.err")"
ctl freq=499 seconds=0
# mem_now: "AVAIL OWN": MemAvailable, and the bytes of what processes hold
# themselves in the kernel, never the module: slab caches other than
# kmalloc's (the module allocates with kmalloc and vmalloc only), page
# tables, kernel stacks, anonymous pages.  The slab caches are read before
# and after /proc/meminfo and the larger taken, so that a child freeing
# its VMAs between the reads makes OWN too large, never the rest.
slab_own() {
	local name num size t=0 _
	{
		read -r _
		read -r _
		while read -r name _ num size _; do
			[[ $name == *kmalloc* ]] || t=$((t + num * size))
		done
	} </proc/slabinfo
	echo "$t"
}
mem_now() {
	local k v _ s1 s2 avail=0 own=0
	s1=$(slab_own)
	while read -r k v _; do
		case $k in
		MemAvailable:) avail=$((v * 1024)) ;;
		PageTables: | KernelStack: | AnonPages:) own=$((own + v * 1024)) ;;
		esac
	done </proc/meminfo
	s2=$(slab_own)
	echo "$avail" $((own + (s1 > s2 ? s1 : s2)))
}
sync
echo 3 >/proc/sys/vm/drop_caches
reader_start "$OUT/h.raw"
read -r base base_own < <(mem_now)
setpriv --reuid=65534 --regid=65534 --clear-groups \
	"$WORKLOADS/manymaps" 65000 180 400 "$kids_want" >"$OUT/hostile.out" 2>&1 &
host=$!
t0=$SECONDS
low=$base
held=0
high=0
# poll: the lowest MemAvailable; the most it dropped, less what processes
# hold themselves (the memory the module could be holding); the highest
# maps_bytes
poll() {
	local m o b h
	read -r m o < <(mem_now)
	b=$(stat_of maps_bytes)
	((m < low)) && low=$m
	h=$((base - m - (o - base_own)))
	((h > held)) && held=$h
	((${b:-0} > high)) && high=${b:-0}
	sleep 0.5
}
while kill -0 "$host" 2>/dev/null; do
	poll
done
wait "$host" || fail "the hostile manymaps failed: $(tail -n 3 "$OUT/hostile.out")"
secs=$((SECONDS - t0))
reader_stop
# Then a profile of more address spaces than maps_mb holds (not during the
# children: a working set over the budget is listed again and again, and
# the reader serves those listings before the children's requests).
# They spin at nice 19: on a guest of 2 CPUs, 40 spinners at the reader's
# priority starve it of the time to serve their listings (CI's 6.12-rt
# saw no eviction at all) and this shell of the time to poll.
reader_start "$OUT/e.raw"
# a read of stats that gave no value (seen once with 76 children) is read
# again
for ((i = 0; i < 10; i++)); do
	evicted1=$(stat_of maps_evicted)
	[[ -z $evicted1 ]] || break
	sleep 0.1
done
[[ -n $evicted1 ]] || fail "stats gave no maps_evicted"
lru=()
for ((i = 0; i < 40; i++)); do
	setpriv --reuid=65534 --regid=65534 --clear-groups \
		nice -n 19 "$WORKLOADS/manymaps" 1100 600 >/dev/null 2>&1 &
	lru+=($!)
done
# 10 s, then on until the first eviction, for 240 s at most (times the
# guest's slowness: the debug kernel's KASAN): 40 processes take that
# long to be sampled and listed (16 s on 6.1, 48 and 102 s on 6.12-rt
# under TCG; a read that gave no value counts as no eviction yet)
t1=$SECONDS
last=$evicted1
while :; do
	poll
	ev=$(stat_of maps_evicted)
	[[ -z $ev ]] || last=$ev
	((SECONDS - t1 < 10)) && continue
	((last == evicted1)) || break
	((SECONDS - t1 < 240 * ${CPROF_SLOW:-1})) || break
done
esecs=$((SECONDS - t1))
kill "${lru[@]}"
wait "${lru[@]}" 2>/dev/null || true
ev=$(stat_of maps_evicted)
evicted=$((${ev:-$last} - evicted1))
reader_stop
kill "$qs"
wait "$qs" || true
"$WORKLOADS/streamtext" <"$OUT/h.raw" >"$OUT/h.raw.txt" || fail "$OUT/h.raw is not a well-formed stream"
kids=$(grep -c '^child ' "$OUT/hostile.out" || true)
drop=$((base - low))
echo "hostile: $kids children of 65 000 mappings in ${secs}s; maps_bytes at most $high (maps_limit $limit);" \
	"MemAvailable at most $((drop >> 20)) MiB below its start ($((base >> 20)) MiB)," \
	"less what processes hold themselves at most $((held >> 20)) MiB;" \
	"maps_exited $(stat_of maps_exited), maps_capped $(stat_of maps_capped);" \
	"40 processes of 1 100 mappings for ${esecs}s: maps_evicted +$evicted"
# Each child's samples in its own page ("child PID at ADDR"), and whether
# a mapping record of its pid covers that page.
read -r ns nc < <(rawk '
	function hex(s,   i, v) { v = 0; s = tolower(s); sub(/^0x/, "", s); for (i = 1; i <= length(s); i++) v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1; return v }
	FILENAME ~ /hostile.out$/ { if ($1 == "child") P[$2] = hex($4); next }
	$1 == "M" && ($M_pid in P) { if (hex($M_start) <= P[$M_pid] && hex($M_end) > P[$M_pid]) cov[$M_pid] = 1; next }
	$1 == "S" && ($S_pid in P) && $S_nr_user > 0 {
		x = hex($(S_ip + $S_nr_kernel))
		if (x >= P[$S_pid] && x < P[$S_pid] + 4096) n[$S_pid]++
	}
	END { for (p in n) { s += n[p]; if (p in cov) c += n[p] }; print s + 0, c + 0 }' "$OUT/hostile.out" "$OUT/h.raw.txt")
echo "the children's samples in their pages: $ns, $nc of them in a mapping record"
"$CPROF_DUMP" -i "$OUT/h.raw" -f folded -o "$OUT/h.folded" 2>"$OUT/hdump.err" ||
	fail "cprof-dump failed: $(cat "$OUT/hdump.err")"
read -r qn qm < <(rawk '{ split($folded_stack, fr, ";") } fr[1] == "qsortsplit" { n += $NF; if ($folded_stack ~ /(^|;)main;/) m += $NF }
	END { print n + 0, m + 0 }' "$OUT/h.folded")
echo "qsortsplit alongside: $qm of $qn stacks reach main"
((kids == kids_want)) || fail "only $kids hostile children of $kids_want"
((held < limit + (64 << 20))) || fail "MemAvailable dropped $((held >> 20)) MiB more than processes hold themselves, over the budget $((limit >> 20)) MiB + 64 MiB"
[[ $(stat_of maps_limit) == "$limit" ]] || fail "maps_limit is '$(stat_of maps_limit)', not $limit"
((high <= limit)) || fail "maps_bytes reached $high, over maps_limit $limit"
((evicted > 0)) || fail "no address space's list was evicted"
((ns >= 100)) || fail "only $ns samples of the children in their pages"
((nc * 100 >= ns * 90)) || fail "only $nc of $ns samples of the children in their pages are in a mapping record"
((qn >= 500)) || fail "only $qn samples of qsortsplit"
((qm * 100 >= qn * 99)) || fail "only $qm of $qn qsortsplit stacks reach main"
echo "k_mapsbudget: ok"
