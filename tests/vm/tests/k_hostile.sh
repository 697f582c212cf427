#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# k_hostile: programs that corrupt their own frame chain (a self loop, a
# chain going down, a kernel address, a misaligned and an unmapped frame
# pointer, a valid chain deeper than any limit), in user mode and inside
# system calls.  The kernel must not crash, warn or hang (the harness checks
# the log and taint), must never follow the chain into kernel memory, and
# must count the walks it cut short.
# vm-timeout: 150
set -euo pipefail
# shellcheck source=../lib/kprof.sh
. "$REPO/tests/vm/lib/kprof.sh"

kinds="loop down kernel misaligned unmapped deep"
for k in $kinds; do
	cp "$WORKLOADS/hostile" "/tmp/h_$k"
done
kload
ctl freq=999 seconds=4 depth=64
faults0=$(stat_of user_faults)
trunc0=$(stat_of user_truncated)
for k in $kinds; do
	"/tmp/h_$k" "$k" 5 &
done
profile "$OUT/p.raw"
wait
faults=$(($(stat_of user_faults) - faults0))
trunc=$(($(stat_of user_truncated) - trunc0))
echo "user_faults +$faults, user_truncated +$trunc"

# max user frames allowed per kind: the leaf, plus the one sane frame of
# loop/down (and the syscall wrapper's caller a tick inside getppid() may
# add), plus nothing else; deep is cut at the depth.
for k in $kinds; do
	read -r n maxu minu kaddr flagged < <(awk -v c="h_$k" '
	$1 == "S" && $9 == c {
		n++; u = $8
		if (u > maxu) maxu = u
		if (minu == "" || u < minu) minu = u
		for (i = 10 + $7; i <= NF; i++) if (length($i) > 12) kaddr++
		if (int($6 / 4) % 4) flagged++	# USER_TRUNC or USER_FAULT
	} END { print n + 0, maxu + 0, minu + 0, kaddr + 0, flagged + 0 }' "$OUT/p.raw.txt")
	echo "h_$k: $n samples, user frames $minu..$maxu, $flagged flagged, $kaddr kernel-space user frames"
	((n >= 50)) || fail "h_$k: only $n samples"
	((kaddr == 0)) || fail "h_$k: $kaddr user frames hold kernel addresses"
	((flagged == n)) || fail "h_$k: $((n - flagged)) of $n walks not flagged truncated/faulted"
	case $k in
	deep) ((minu == 64 && maxu == 64)) || fail "h_deep: user frames $minu..$maxu, want the depth (64)" ;;
	loop | down) ((maxu <= 3)) || fail "h_$k: $maxu user frames, want <= 3" ;;
	*) ((maxu <= 2)) || fail "h_$k: $maxu user frames, want <= 2" ;;
	esac
done
((faults > 0)) || fail "user_faults did not grow"
((trunc > 0)) || fail "user_truncated did not grow"
echo "k_hostile: ok"
