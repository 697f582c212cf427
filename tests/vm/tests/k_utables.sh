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
#   - random tables that pass the checks (any rule, any offset) replaced
#     every few milliseconds for a program that runs (cpuburn), and for the
#     programs with corrupt frame chains of k_hostile, while a profile
#     samples them at 999 Hz and depth 127: the kernel does not crash, warn
#     or hang (the harness checks the log and taint), the profile ends
#     complete, user stacks hold no kernel address, and the walks that used
#     a table (user_table) and those cut short (user_faults) are counted.
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
echo "user_table +$table, user_faults +$faults"
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

# A table of no rows removes the file's table.
"$WORKLOADS/badtables" remove "$U" /tmp/ub || fail "removing /tmp/ub's table failed"
! grep -q "^$devino " "$U" || fail "/tmp/ub's table is still listed after its removal"
echo "k_utables: ok"
