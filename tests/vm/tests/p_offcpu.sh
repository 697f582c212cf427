#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# p_offcpu: cprof's off-CPU profile beside BCC's offcputime (Debian's
# bpfcc-tools) on the same workload in the same guest, one after the
# other, each for SECS seconds of offwait's known waits
# (tests/workloads/offwait.c):
#   - the sleeper is off the CPU the whole time, split 1:3 between
#     nap_short and nap_long; the worker sleeps 3 parts in 4 in nap_work;
#     the reader is blocked in read_pipe nearly all the time;
#   - cprof's totals of those waits within 5 points of the known wait
#     (the reader's: bcc's total for it); bcc's printed beside them;
#   - the same ranking of the threads in both (sleeper and reader over the
#     worker, the worker at 75 % within 10), and in cprof's stacks
#     nap_long, nap_work and read_pipe over nap_short (bcc walks user
#     stacks by frame pointers: through libc, built without them, it loses
#     the callers of nanosleep() and read(), so its stacks have no nap_*
#     frames to rank; one stack of each is printed).
# Each tool's own figures are printed, the other's beside them.
# Runs on 6.1 only in make check (bcc compiles its program with clang in
# the guest): P_OFFCPU_ANY=1 runs it on any kernel.
# vm-long: a side-by-side with an anchor (make check-long)
# vm-timeout: 400
set -euo pipefail
# shellcheck source=../lib/kprof.sh
. "$REPO/tests/vm/lib/kprof.sh"
# shellcheck source=../lib/folded.sh
. "$REPO/tests/vm/lib/folded.sh"

[[ -n ${P_OFFCPU_ANY:-} || ($KVER == 6.1.0-* && $KVER != *-rt-*) ]] ||
	skip "runs on 6.1 only (P_OFFCPU_ANY=1: on any kernel)"
[[ -x $CPROF_DUMP ]] || fail "no cprof-dump at $CPROF_DUMP"
command -v offcputime-bpfcc >/dev/null || skip "no offcputime-bpfcc (bpfcc-tools) on this host"
SECS=5
mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug
mountpoint -q /sys/kernel/tracing || mount -t tracefs none /sys/kernel/tracing 2>/dev/null || true
kload
"$WORKLOADS/offwait" 600 >"$OUT/offwait.out" &
waiter=$!
wait_lines "$OUT/offwait.out" 5 || fail "offwait did not start its threads"

"$CPROF_DUMP" -d $SECS --kind offcpu -p "$waiter" -f folded -o "$OUT/cprof.folded" \
	2>"$OUT/cprof.err" || fail "cprof-dump --kind offcpu failed: $(cat "$OUT/cprof.err")"
# bcc: its program compiled first (clang, seconds under TCG), then SECS
# seconds of recording; -f: folded, microseconds
offcputime-bpfcc -p "$waiter" -f "$SECS" >"$OUT/bcc.folded" 2>"$OUT/bcc.err" ||
	fail "offcputime-bpfcc failed: $(tail -5 "$OUT/bcc.err")"
kill "$waiter"
wait "$waiter" 2>/dev/null || true

total=$((SECS * 1000000))
declare -A got
for tool in cprof bcc; do
	f=$OUT/$tool.folded
	got[$tool.short]=$(us "$f" sleeper ';nap_short(;|$)')
	got[$tool.long]=$(us "$f" sleeper ';nap_long(;|$)')
	got[$tool.sleeper]=$(us "$f" sleeper '')
	got[$tool.work]=$(us "$f" worker ';nap_work(;|$)')
	got[$tool.read]=$(us "$f" reader ';read_pipe(;|$)')
	got[$tool.worker]=$(us "$f" worker '')
	got[$tool.reader]=$(us "$f" reader '')
	printf '%-5s sleeper %s%% of %s s (nap_short %s%%, nap_long %s%% of it); reader %s%% (in read_pipe %s%%); worker %s%% (in nap_work %s%%)\n' \
		"$tool" "$(pct "${got[$tool.sleeper]}" $total)" $SECS \
		"$(pct "${got[$tool.short]}" "${got[$tool.sleeper]}")" \
		"$(pct "${got[$tool.long]}" "${got[$tool.sleeper]}")" \
		"$(pct "${got[$tool.reader]}" $total)" "$(pct "${got[$tool.read]}" $total)" \
		"$(pct "${got[$tool.worker]}" $total)" "$(pct "${got[$tool.work]}" $total)"
done
# bcc walks user stacks by frame pointers: through libc's, which has none,
# the caller of nanosleep() or read() is lost
grep -m1 -E '^sleeper;' "$OUT/bcc.folded" | sed 's/^/  bcc, a sleeper stack: /'
grep -m1 -E '^sleeper;.*nap_long' "$OUT/cprof.folded" | sed 's/^/  cprof, a sleeper stack: /'

# cprof against the known waits: within 5 % of them
within "$(pct "${got[cprof.sleeper]}" $total)" 100 5 ||
	fail "cprof: the sleeper is off the CPU $(pct "${got[cprof.sleeper]}" $total)% of the profile, not 100% within 5"
within "$(pct "${got[cprof.long]}" "${got[cprof.sleeper]}")" 75 5 ||
	fail "cprof: nap_long is $(pct "${got[cprof.long]}" "${got[cprof.sleeper]}")% of the sleeper's wait, not 75% within 5"
within "$(pct "${got[cprof.work]}" $total)" 75 5 ||
	fail "cprof: the worker's nap_work is $(pct "${got[cprof.work]}" $total)% of the profile, not 75% within 5"
# (the reader runs a little each 20 ms: its known wait is what bcc saw)
within "$(pct "${got[cprof.read]}" $total)" "$(pct "${got[bcc.reader]}" $total)" 5 ||
	fail "cprof: the reader's read_pipe is $(pct "${got[cprof.read]}" $total)% of the profile, bcc's reader $(pct "${got[bcc.reader]}" $total)%: not within 5"
# the same ranking of the threads in both: the sleeper and the reader
# (off the CPU all the time) over the worker (3 parts in 4); and in
# cprof, whose stacks have them, nap_long and nap_work over nap_short
for tool in cprof bcc; do
	for w in sleeper reader; do
		((${got[$tool.$w]} > ${got[$tool.worker]})) ||
			fail "$tool: the $w (${got[$tool.$w]} us) does not outrank the worker (${got[$tool.worker]} us)"
	done
	within "$(pct "${got[$tool.worker]}" $total)" 75 10 ||
		fail "$tool: the worker is off the CPU $(pct "${got[$tool.worker]}" $total)% of the time, not 75% within 10"
done
for w in long work read; do
	((${got[cprof.$w]} > ${got[cprof.short]})) ||
		fail "cprof: ${w} (${got[cprof.$w]} us) does not outrank nap_short (${got[cprof.short]} us)"
done
echo "p_offcpu: the same ranking of the threads in both; cprof within 5 % of the known waits"
