#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# k_hostile: programs that corrupt their own frame chain (a self loop, a
# chain going down, a kernel address, a misaligned and an unmapped frame
# pointer, a valid chain deeper than any limit), in user mode and inside
# system calls.  The kernel must not crash, warn or hang (the harness checks
# the log and taint), must never follow the chain into kernel memory, and
# must count the walks it cut short.
# vm-kernels: 6.1 6.12-rt
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

# Per kind, the user frames a walk may return: the leaf, plus the one sane
# frame of loop/down (and the syscall wrapper's caller a tick inside
# getppid() may add); deep is cut at the depth.  A tick can land on the few
# instructions around the corruption, where the chain is still the real
# one: judge 95% of the samples, and the whole lot for kernel addresses.
for k in $kinds; do
	case $k in
	deep) lo=64 hi=64 ;;
	loop | down) lo=1 hi=3 ;;
	*) lo=1 hi=2 ;;
	esac
	read -r n good kaddr < <(rawk -v c="h_$k" -v lo="$lo" -v hi="$hi" '
	$1 == "S" && $S_comm == c {
		n++
		for (i = S_ip + $S_nr_kernel; i <= NF; i++) if (length($i) > 12) kaddr++
		# flagged USER_TRUNC (4) or USER_FAULT (8), frames within bounds
		if (int($S_flags / 4) % 4 && $S_nr_user >= lo && $S_nr_user <= hi) good++
	} END { print n + 0, good + 0, kaddr + 0 }' "$OUT/p.raw.txt")
	echo "h_$k: $n samples, $good flagged with $lo..$hi user frames, $kaddr kernel-space user frames"
	((n >= 50)) || fail "h_$k: only $n samples"
	((kaddr == 0)) || fail "h_$k: $kaddr user frames hold kernel addresses"
	((good * 100 >= n * 95)) || {
		rawk -v c="h_$k" '$1 == "S" && $S_comm == c && n++ < 5' "$OUT/p.raw.txt"
		fail "h_$k: only $good of $n walks flagged with $lo..$hi user frames"
	}
done
((faults > 0)) || fail "user_faults did not grow"
((trunc > 0)) || fail "user_truncated did not grow"
echo "k_hostile: ok"
