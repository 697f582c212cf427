#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# k_utables: /proc/cprof/unwind under hostile input.
#   - malformed tables (short, bad magic or sizes, unsorted or equal
#     offsets, unknown rules, no final NONE row, too many rows, over
#     unwind_mb, removing what is not there): each refused with its errno
#     (EINVAL, ENOSPC, ENOENT), and the list of tables unchanged;
#   - cprof-dump --load-unwind-tables -p: the program's files are listed
#     (MAJOR:MINOR INODE SIZE MTIME as stat shows them) and a table of no
#     rows removes one;
#   - random tables that pass the checks (any rule, any offset; every
#     other one with a CPython layout of any addresses and offsets, so the
#     Python walk reads whatever they say) replaced
#     every few milliseconds for a program that runs (cpuburn), and for the
#     programs with corrupt frame chains of k_hostile, while a profile
#     samples them at 999 Hz and depth 127: the kernel does not crash, warn
#     or hang (the harness checks the log and taint), the profile ends
#     complete, user stacks hold no kernel address, and the walks that used
#     a table (user_table) and those cut short (user_faults) are counted;
#   - a full unwind_mb evicts the least recently used tables: with
#     unwind_mb=1, a program's tables are loaded, then tables of files
#     no process maps, then the program is profiled (its tables are used),
#     then more unused tables: they evict the unused ones loaded after the
#     program's, not the program's own (first in, but used last); the
#     bytes stay within 1 MiB, unwind_evicted counts, and a profile after
#     still walks with the program's table;
#   - the vDSO's table (cprof-dump makes it from its own vDSO): listed as
#     fff:00 1 SIZE 0, and a program that spends its time in the vDSO's
#     clock_gettime(), called from code without frame pointers (clockspin),
#     has its stacks reach main through it (with --no-unwind-tables the
#     figure is printed beside).
# vm-kernels: 6.1 6.12-rt
# vm-timeout: 240
set -euo pipefail
# shellcheck source=../lib/kprof.sh
. "$REPO/tests/vm/lib/kprof.sh"

[[ -x $CPROF_DUMP ]] || fail "no cprof-dump at $CPROF_DUMP"
U=/proc/cprof/unwind
kload
ctl unwind_mb=1
"$WORKLOADS/badtables" reject "$U" >"$OUT/reject.txt" ||
	{ cat "$OUT/reject.txt"; fail "a malformed table was not refused as it should be"; }
cat "$OUT/reject.txt"
ctl unwind_mb=64

# Real tables for one program, listed as stat describes its file.
cp "$WORKLOADS/cpuburn" /tmp/ub
/tmp/ub 30 >/dev/null &
ub=$!
"$CPROF_DUMP" --load-unwind-tables -p "$ub" 2>"$OUT/load.err" ||
	fail "cprof-dump --load-unwind-tables failed: $(cat "$OUT/load.err")"
cat "$OUT/load.err"
read -r maj min ino size < <(stat -c '%Hd %Ld %i %s' /tmp/ub)
devino=$(printf '%02x:%02x %s %s' "$maj" "$min" "$ino" "$size")
grep -q "^$devino " "$U" || fail "no table listed for /tmp/ub ($devino): $(cat "$U")"
n=$(wc -l <"$U")
((n >= 2)) || fail "only $n tables after loading cpuburn's (its own, libc, ld.so)"
echo "tables after --load-unwind-tables: $n, /tmp/ub listed as $devino"

kinds="loop down kernel misaligned unmapped deep"
for k in $kinds; do
	cp "$WORKLOADS/hostile" "/tmp/h_$k"
	"/tmp/h_$k" "$k" 8 &
done
ctl freq=999 seconds=4 depth=127
table0=$(stat_of user_table)
faults0=$(stat_of user_faults)
python0=$(stat_of python_walks)
rnd=()
for f in /tmp/ub /tmp/h_loop /tmp/h_down /tmp/h_kernel /tmp/h_deep; do
	"$WORKLOADS/badtables" random "$U" "$f" 6 >"$OUT/random.${f##*/}" &
	rnd+=($!)
done
profile "$OUT/p.raw"
for p in "${rnd[@]}"; do
	wait "$p" || fail "writing random tables failed: $(cat "$OUT"/random.*)"
done
cat "$OUT"/random.*
kill "$ub" 2>/dev/null || true
wait
table=$(($(stat_of user_table) - table0))
faults=$(($(stat_of user_faults) - faults0))
python=$(($(stat_of python_walks) - python0))
echo "user_table +$table, user_faults +$faults, python_walks +$python (of them incomplete: $(stat_of python_incomplete))"
rawk '$1 == "E" && $E_reason == 0 { ok = 1 } END { exit !ok }' "$OUT/p.raw.txt" ||
	fail "the profile did not end complete: $(grep '^E' "$OUT/p.raw.txt")"
read -r n kaddr < <(rawk '$1 == "S" && $S_comm ~ /^(ub|h_)/ {
	# kernel space: the upper half, 0xffff8... and up (a table that lies
	# can yield any user address, up to 56 bits with 5-level paging)
	n++; for (i = S_ip + $S_nr_kernel; i <= NF; i++) if (length($i) == 16 && $i ~ /^[89a-f]/) kaddr++
} END { print n + 0, kaddr + 0 }' "$OUT/p.raw.txt")
echo "$n samples of the programs under random tables, $kaddr kernel-space user frames"
((n >= 200)) || fail "only $n samples"
((kaddr == 0)) || fail "$kaddr user frames hold kernel addresses"
((table > 0)) || fail "no walk used a table"
((faults > 0)) || fail "user_faults did not grow"
((python > 0)) || fail "no Python walk ran under the random layouts"

# A table of no rows removes the file's table.
"$WORKLOADS/badtables" remove "$U" /tmp/ub || fail "removing /tmp/ub's table failed"
! grep -q "^$devino " "$U" || fail "/tmp/ub's table is still listed after its removal"

# Eviction, least recently used first.  good()'s fake device is 0x12345:
# listed as 123:45.
fake_listed() { grep -c "^123:45 " "$U" || true; }
# A fresh module: no table but those loaded here (no cache: its preload
# would fill unwind_mb with tables earlier tests left there).
rmmod cprof || fail "rmmod cprof failed"
kload
ctl unwind_mb=1
/tmp/ub 60 >/dev/null &
ub=$!
"$CPROF_DUMP" --load-unwind-tables -p "$ub" --table-cache "" 2>"$OUT/load2.err" ||
	fail "loading /tmp/ub's tables failed: $(cat "$OUT/load2.err")"
grep -q "^$devino " "$U" || fail "no table for /tmp/ub under unwind_mb=1: $(cat "$U")"
real=$(wc -l <"$U")
for i in 1 2 3; do
	"$WORKLOADS/badtables" fill "$U" "$i" 16000 || fail "fake table $i refused"
done
((real + 3 == $(wc -l <"$U"))) || fail "fake tables 1-3 evicted something: $(cat "$U")"
ev0=$(stat_of unwind_evicted)
table0=$(stat_of user_table)
ctl freq=499 seconds=2 "pid=$ub" depth=127
profile "$OUT/e1.raw"
((table0 < $(stat_of user_table))) || fail "the profile of /tmp/ub used no table"
for i in 4 5 6; do
	"$WORKLOADS/badtables" fill "$U" "$i" 16000 || fail "fake table $i refused"
done
bytes=$(stat_of unwind_bytes)
evicted=$(($(stat_of unwind_evicted) - ev0))
echo "unwind_mb=1: $(wc -l <"$U") tables, $bytes bytes, $evicted evicted; listed:"
cat "$U"
((bytes <= 1048576)) || fail "unwind_bytes $bytes over unwind_mb=1"
((evicted > 0)) || fail "nothing evicted: unwind_evicted did not grow"
grep -q "^$devino " "$U" || fail "/tmp/ub's table, the one used last, was evicted"
grep -q "^123:45 6 " "$U" || fail "the last table written is not listed"
! grep -q "^123:45 1 " "$U" || fail "fake table 1, never used, outlived /tmp/ub's"
table0=$(stat_of user_table)
ctl freq=499 seconds=1 "pid=$ub" depth=127
profile "$OUT/e2.raw"
((table0 < $(stat_of user_table))) || fail "after the evictions, /tmp/ub's walks used no table"
kill "$ub" 2>/dev/null || true
wait
# A table larger than unwind_mb by itself: ENOSPC, nothing evicted.
n0=$(wc -l <"$U")
ev0=$(stat_of unwind_evicted)
! "$WORKLOADS/badtables" fill "$U" 7 300000 2>"$OUT/big.err" ||
	fail "a 300000-row table was taken under unwind_mb=1"
grep -q "No space left on device" "$OUT/big.err" || fail "not ENOSPC: $(cat "$OUT/big.err")"
((n0 == $(wc -l <"$U") && ev0 == $(stat_of unwind_evicted))) ||
	fail "a refused table evicted others"

# The vDSO's table.
rmmod cprof || fail "rmmod cprof failed"
kload
"$WORKLOADS/clockspin" 60 >/dev/null &
cs=$!
vdso_share() { # OUT [OPTION]: "stacks through the vDSO, those reaching main"
	"$CPROF_DUMP" -d 3 -F 499 -p "$cs" -f folded -o "$1" ${2:+"$2"} 2>"$1.err" ||
		fail "cprof-dump -d $2 failed: $(cat "$1.err")"
	awk '/\[vdso\]/ { c = $NF; n += c; if ($0 ~ /;main;/) m += c }
		END { print n + 0, m + 0 }' "$1"
}
read -r fn fm < <(vdso_share "$OUT/vdso.fp.folded" --no-unwind-tables)
read -r tn tm < <(vdso_share "$OUT/vdso.table.folded")
kill "$cs" 2>/dev/null || true
wait
grep -E "^fff:00 1 [0-9]+ 0 " "$U" || fail "no table listed for the vDSO: $(cat "$U")"
echo "clockspin in the vDSO: $tm of $tn samples reach main with tables, $fm of $fn by frame pointers"
((tn >= 200)) || fail "only $tn samples of clockspin in the vDSO"
((tm * 100 >= tn * 95)) || {
	grep '\[vdso\]' "$OUT/vdso.table.folded" | grep -v ';main;' | sort -t' ' -k2nr | head -n 5
	fail "only $tm of $tn samples in the vDSO reach main"
}
echo "k_utables: ok"
