#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# k_threads: two threads pinned to CPU 0 and CPU 1: each one's samples carry
# its own tid and the CPU it is pinned to.  Then thread snapshots
# (kind=threads):
#   - 10 while short threads come and go, each exiting in the wait the
#     debug build (CPROF_KO_DEBUG) puts between reading a thread's stack
#     pointer and copying its registers (regs_delay_us): those copies are
#     dropped and counted (threads_regs_dropped), the snapshots
#     well-formed, no oops or report (the harness);
#   - 5 with cpus=0: CPU 1 is never interrupted: its function-call
#     interrupts (CAL in /proc/interrupts) do not move (but on PREEMPT_RT,
#     which sends its own), and the thread spinning there is recorded
#     running, without stacks, flagged CPROF_THREAD_NOT_SELECTED, never
#     running with stacks (off the CPU when preempted: walked then).
#     Everything else runs on CPU 0 meanwhile (the scheduler's wake-ups
#     across CPUs are function-call interrupts too).
# vm-kernels: 6.1 6.12-rt
# vm-timeout: 150
set -euo pipefail
# shellcheck source=../lib/kprof.sh
. "$REPO/tests/vm/lib/kprof.sh"

kload
ctl freq=999 seconds=3
"$WORKLOADS/threads" $((5 * ${CPROF_SLOW:-1})) >"$OUT/threads.out" &
wait_lines "$OUT/threads.out" 2 || fail "threads did not start its threads"
profile "$OUT/p.raw"
wait
cat "$OUT/threads.out"
pid=$(pgrep -x threads || true)
for cpu in 0 1; do
	tid=$(awk -v c="cpu$cpu" '$1 == c { print $2 }' "$OUT/threads.out")
	[[ -n $tid ]] || fail "threads printed no tid for cpu$cpu"
	read -r all right < <(rawk -v t="$tid" -v c="$cpu" '$1 == "S" && $S_tid == t {
		n++; if ($S_cpu == c) m++ } END { print n + 0, m + 0 }' "$OUT/p.raw.txt")
	echo "tid $tid: $right of $all samples on cpu$cpu"
	((all >= 150)) || fail "only $all samples for tid $tid"
	((right * 100 >= all * 99)) || fail "tid $tid: $right of $all samples on cpu$cpu"
	tgid=$(rawk -v t="$tid" '$1 == "S" && $S_tid == t { print $S_pid; exit }' "$OUT/p.raw.txt")
	[[ -z $pid || $tgid == "$pid" ]] || fail "tid $tid sampled with pid $tgid, want $pid"
	main=$(rawk -v t="$tid" '$1 == "S" && $S_tid == t && $S_pid == $S_tid' "$OUT/p.raw.txt" | wc -l)
	((main == 0)) || fail "worker thread $tid has samples with tid == pid"
done

# the race: threads exiting in the wait
rmmod cprof
insmod "$CPROF_KO_DEBUG" regs_delay_us=5000 || fail "insmod $CPROF_KO_DEBUG failed"
"$WORKLOADS/threads" $((30 * ${CPROF_SLOW:-1})) 2000 >"$OUT/churn.out" &
churner=$!
wait_lines "$OUT/churn.out" 2 || fail "threads did not start its threads"
ctl kind=threads pid="$churner"
# (each snapshot waits 5 ms a thread it copies: on a slow guest the
# churner's 30 s can end first, and the snapshots with it)
for ((i = 0; i < 10; i++)); do
	kill -0 "$churner" 2>/dev/null || break
	cat /proc/cprof/profile >"$OUT/churn.raw" || fail "snapshot $i failed"
done
kill "$churner" 2>/dev/null || true
wait "$churner" || true
echo "$i snapshots taken while the threads came and went"
((i >= 1)) || fail "the churner ended before the first snapshot"
"$WORKLOADS/streamtext" <"$OUT/churn.raw" >"$OUT/churn.txt" || fail "the last snapshot is malformed"
dropped=$(stat_of threads_regs_dropped)
echo "$i snapshots of exiting threads: $dropped register copies dropped; the last one $(rawk '$1 == "R"' "$OUT/churn.txt" | wc -l) thread records"
((dropped >= 1)) || fail "no register copy of an exiting thread was dropped: the race did not happen"

# CPU 1 left alone: this script, its programs and unbound work on CPU 0
echo 0 >/sys/module/cprof/parameters/regs_delay_us
taskset -pc 0 $$ >/dev/null
wqmask=/sys/devices/virtual/workqueue/cpumask
oldmask=$(<"$wqmask")
echo 1 >"$wqmask"
"$WORKLOADS/threads" $((60 * ${CPROF_SLOW:-1})) >"$OUT/cal.out" &
spinner=$!
wait_lines "$OUT/cal.out" 2 || fail "threads did not start its threads"
tid1=$(awk '$1 == "cpu1" { print $2 }' "$OUT/cal.out")
ctl kind=threads pid="$spinner" cpus=0
cal1() { awk '$1 == "CAL:" { print $3 }' /proc/interrupts; }
before=$(cal1)
for ((i = 0; i < 5; i++)); do
	cat /proc/cprof/profile >"$OUT/cal$i.raw" || fail "snapshot $i failed"
done
after=$(cal1)
echo "$oldmask" >"$wqmask"
kill "$spinner" 2>/dev/null || true
for ((i = 0; i < 5; i++)); do
	"$WORKLOADS/streamtext" <"$OUT/cal$i.raw" >>"$OUT/cal.txt" || fail "snapshot $i is malformed"
done
read -r seen bare walked < <(rawk -v t="$tid1" '$1 == "R" && $R_tid == t { n++
		if (int($R_flags / 2048) % 2 && $R_state == 5 && $R_nr_kernel + $R_nr_user == 0) b++
		if ($R_state == 5 && $R_nr_kernel + $R_nr_user > 0) w++
	} END { print n + 0, b + 0, w + 0 }' "$OUT/cal.txt")
echo "5 snapshots with cpus=0: CPU 1's spinner in $seen, $bare of them running unwalked; CPU 1's CAL $before -> $after"
# (PREEMPT_RT sends CPU 1 function calls of its own meanwhile: 92 in one
# run on 6.12-rt.  A snapshot's interrupt would have walked the spinner
# where it ran: no record of it running with stacks shows none reached
# it.  Preempted at a snapshot, it is walked off the CPU, no interrupt.)
if [[ $(uname -r) != *-rt-* ]]; then
	((after == before)) || fail "CPU 1, outside cpus=, took $((after - before)) function-call interrupts during the snapshots"
fi
((seen == 5 && bare >= 1)) || fail "CPU 1's spinner: in $seen of 5 snapshots, $bare of them running without stacks"
((walked == 0)) || fail "CPU 1's spinner walked while running in $walked snapshots: an interrupt reached CPU 1"
echo "k_threads: ok"
