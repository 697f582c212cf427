#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# p_mutex: cprof's mutex profile beside BCC's wakeuptime (Debian's
# bpfcc-tools), both recording the same round of mutexhold
# (tests/workloads/mutexhold.c: one pthread mutex held in hold_few and
# hold_many, 1:3 of the time, while 4 threads wait for it):
#   - cprof-dump --kind mutex -p PID: the delay charged to each function's
#     unlocks (user stacks);
#   - wakeuptime-bpfcc -f -p PID: the waiters' sleep times by the waker's
#     name and kernel stack (it walks no user stack; mutexhold's holder
#     names itself after the function it holds the lock in), the wakes
#     through futex_wake only;
#   - mutexhold runs on one CPU: wakeuptime reads the waker off the
#     sched_wakeup tracepoint, which for a wake-up sent to another CPU
#     fires there, in whatever task runs on it (on 6.12 it credited most
#     of the holder's wakes to cprof-dump, sleep or swapper);
#   - the same ranking in both (hold_many's unlocks over hold_few's), and
#     cprof's share within 6 points of mutexhold's own measurement (as in
#     u_mutex); bcc's share printed beside it.
# Runs on 6.1 and 6.12 (not RT; P_MUTEX_ANY=1: on any kernel); BCC
# compiles its program with clang in the guest first.
# vm-long: a side-by-side with an anchor (make check-long)
# vm-timeout: 400
set -euo pipefail
# shellcheck source=../lib/kprof.sh
. "$REPO/tests/vm/lib/kprof.sh"
# shellcheck source=../lib/folded.sh
. "$REPO/tests/vm/lib/folded.sh"

[[ -n ${P_MUTEX_ANY:-} || ($KVER != *-rt-* && $KVER != *cprof*) ]] ||
	skip "runs on Debian's 6.1 and 6.12, not RT nor the debug kernel (P_MUTEX_ANY=1: on any)"
command -v wakeuptime-bpfcc >/dev/null || skip "no wakeuptime-bpfcc (bpfcc-tools) on this host"
ROUND_S=5
mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug
mountpoint -q /sys/kernel/tracing || mount -t tracefs none /sys/kernel/tracing 2>/dev/null || true
kload
taskset -c 0 "$WORKLOADS/mutexhold" 4 $ROUND_S >"$OUT/mutexhold.out" &
mh=$!
wait_lines "$OUT/mutexhold.out" 1 || fail "mutexhold did not start"
# taskset execs mutexhold: its pid is the job's (an awk of the "ready"
# line gave wakeuptime-bpfcc an empty -p twice in a row on 6.12, the pid
# under bash -x; not understood)
pid=$mh

# bcc ends and prints at SIGINT, which a background job of a script
# ignores: its Python gets SIGINT back before it starts
python3 -c 'import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_DFL)
os.execvp(sys.argv[1], sys.argv[1:])' wakeuptime-bpfcc -f -p "$pid" \
	>"$OUT/bcc.folded" 2>"$OUT/bcc.err" &
bcc=$!
# attached: two probes (raw tracepoints, or kprobes on older kernels)
for ((i = 0; ; i++)); do
	# (find fails on an fd closed while it reads the folder)
	n=$({ find "/proc/$bcc/fd" -lname '*bpf_link*' -o -lname '*perf_event*' 2>/dev/null || true; } | wc -l)
	((n >= 2)) && break
	kill -0 "$bcc" 2>/dev/null || fail "wakeuptime-bpfcc exited: $(tail -n 5 "$OUT/bcc.err")"
	((i < 600 * ${CPROF_SLOW:-1})) || fail "wakeuptime-bpfcc did not attach in $((i / 2)) s"
	sleep 0.5
done
echo "bcc: wakeuptime attached after $((i / 2)) s"

"$CPROF_DUMP" --kind mutex -d 60 -p "$pid" -f folded -o "$OUT/cprof.folded" \
	2>"$OUT/cprof.err" &
cli=$!
wait_profiling || fail "cprof-dump --kind mutex did not start its profile"
settle "$cli"
kill -USR1 "$mh"
wait_lines "$OUT/mutexhold.out" 2 || fail "mutexhold did not finish its round"
ctl stop=1
wait "$cli" || fail "cprof-dump --kind mutex failed: $(cat "$OUT/cprof.err")"
kill -INT "$bcc"
wait "$bcc" || fail "wakeuptime-bpfcc failed: $(tail -n 5 "$OUT/bcc.err")"
read -r _ _ few_ns many_ns < <(grep '^done 1 ' "$OUT/mutexhold.out") ||
	fail "mutexhold: $(tail -n 1 "$OUT/mutexhold.out")"

# microseconds of delay: cprof's under each function's frame; bcc's by
# the waker's name, the wake through futex_wake
cprof_few=$(awk '/;hold_few;/ { c += $NF } END { print c + 0 }' "$OUT/cprof.folded")
cprof_many=$(awk '/;hold_many;/ { c += $NF } END { print c + 0 }' "$OUT/cprof.folded")
bcc_us() { awk -v w="$1" 'index($0, w ";") == 1 && /;futex_wake;/ { c += $NF } END { print c + 0 }' "$OUT/bcc.folded"; }
bcc_few=$(bcc_us hold_few)
bcc_many=$(bcc_us hold_many)
bcc_all=$(awk '{ c += $NF } END { print c + 0 }' "$OUT/bcc.folded")
truth=$(pct "$few_ns" $((few_ns + many_ns)))
echo "mutexhold: hold_few held the lock $truth % of the time hold_few and hold_many held it ($((few_ns / 1000000)) ms and $((many_ns / 1000000)) ms)"
echo "cprof: delay under hold_few's unlocks $(pct "$cprof_few" $((cprof_few + cprof_many))) % ($cprof_few us), hold_many's $cprof_many us"
echo "bcc:   delay woken by hold_few through futex_wake $(pct "$bcc_few" $((bcc_few + bcc_many))) % ($bcc_few us), by hold_many $bcc_many us; $bcc_all us of sleeps in all"
grep -m1 '^hold_many;' "$OUT/bcc.folded" | sed 's/^/  bcc, a wake: /' || true
grep -m1 ';hold_many;' "$OUT/cprof.folded" | sed 's/^/  cprof, a wake: /' || true

((cprof_few > 0 && cprof_many > 0)) || fail "cprof: no delay under hold_few or hold_many"
((bcc_few > 0 && bcc_many > 0)) || fail "bcc: no wake by hold_few or hold_many through futex_wake: $(head -n 3 "$OUT/bcc.folded")"
within "$(pct "$cprof_few" $((cprof_few + cprof_many)))" "$truth" 6 ||
	fail "cprof: hold_few's share of the delay $(pct "$cprof_few" $((cprof_few + cprof_many))) %, mutexhold's own $truth %: more than 6 points apart"
((cprof_many > cprof_few && bcc_many > bcc_few)) ||
	fail "not the same ranking: cprof hold_few $cprof_few us, hold_many $cprof_many us; bcc $bcc_few us, $bcc_many us"
echo "p_mutex: the same ranking in both (hold_many over hold_few); cprof within 6 points of mutexhold's own measurement"
