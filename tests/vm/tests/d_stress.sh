#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# d_stress: the module under load, for make check-debug's kernel (KASAN,
# lockdep, PROVE_RCU_LIST, debug objects), where a race or a misuse shows
# as a report the harness fails on.  Run only when named (d_ tests are not
# in the default plan).
#   - 10 kHz on every CPU for 20 s while a fork/exec storm runs: every
#     sample of a new process sends its mapping request through maps.c;
#   - the same storm under cprof-dump -d with unwind_mb=1: the ticks walk
#     qsortsplit (no frame pointers) with unwind tables while cprof-dump
#     loads the tables of the new programs and tables of no file are
#     written all along, so that the module keeps evicting others
#     (kvfree_rcu() under the ticks' RCU readers); the tables the ticks
#     use are the last to go, so walks with them go on throughout;
#   - 100 load/unload cycles, each with a reader blocked in read(), then
#     20 with cprof-dump -d: 10 unloaded while it loads the running
#     programs' tables, 10 while it reads the profile (it must write what
#     it got);
#   - off the CPU: cprof-dump -d --kind wall (the sched_switch probe and the
#     ticks) through the fork/exec storm and offwait's sleeping, blocking
#     and lock-waiting threads while CPU 1 goes offline and back (15 s
#     once libc's table is in the module, so that the sleeper's naps are
#     walked through libc's nanosleep); then 10
#     profiles unloaded mid-stream, kind=offcpu and kind=wall in turn, a reader
#     blocked in read();
#   - tasks created: cprof-dump -d --kind threadcreate (the task_newtask
#     probe) through the fork/exec storm while CPU 1 goes offline and
#     back; then 6 kind=threadcreate profiles unloaded mid-stream, the
#     storm still forking;
#   - lock contention: cprof-dump -d --kind mutex (the sched_switch and
#     sched_waking probes) through the fork/exec storm and mutexhold's
#     contended mutex while CPU 1 goes offline and back; then 6
#     kind=mutex profiles unloaded mid-stream, the mutex still contended;
#   - the scheduler's timeline: cprof-dump -d --kind trace (every switch
#     and wake-up, a stack at each switch out) through the fork/exec storm
#     and mutexhold's contended mutex while CPU 1 goes offline and back;
#     then 6 kind=trace profiles unloaded mid-stream;
#   - allocations: cprof-dump -d --kind heap (uprobes on heaper's malloc,
#     calloc, realloc, posix_memalign and free) through the fork/exec
#     storm and heaper's rounds while CPU 1 goes offline and back, one
#     sample per 4 KiB; then 6 kind=heap profiles unloaded mid-stream,
#     heaper still allocating, its malloc no breakpoint after each;
#   - thread snapshots (cprof-dump --kind threads) of parked's 2000
#     threads through the fork/exec storm while CPU 1 goes offline and
#     back; then 10 kind=threads readers unloaded mid-pass; then 60 s of
#     snapshots back to back of threads that exit, with the debug build's
#     delay before each register copy (regs_delay_us);
#   - 50 CPU hotplug cycles of CPU 1 during one profile, every running
#     program's tables loaded.
# Every stream must be well-formed; the figures are printed.
# vm-timeout: 3600
set -euo pipefail
# shellcheck source=../lib/kprof.sh
. "$REPO/tests/vm/lib/kprof.sh"

# stats_line: the counters a stress figure quotes.
stats_line() {
	echo "ticks $(stat_of ticks) samples $(stat_of samples) lost $(stat_of lost)" \
		"throttles $(stat_of throttles) user_faults $(stat_of user_faults)"
}

# storm N: start N loops of fork+exec until $OUT/stop exists; each writes
# its count to $OUT/storm.I at the end.
storm() {
	local i
	rm -f "$OUT/stop"
	for ((i = 0; i < $1; i++)); do
		(
			n=0
			while [[ ! -e $OUT/stop ]]; do
				/bin/true
				n=$((n + 1))
			done
			echo "$n" >"$OUT/storm.$i"
		) &
	done
}

# plug FILE: take CPU 1 offline and back until $OUT/stop exists, then
# write the number of cycles to FILE; run in the background.
plug() {
	local n=0
	while [[ ! -e $OUT/stop ]]; do
		if [[ -w $cpu1 ]]; then
			echo 0 >"$cpu1" && sleep 0.1 && echo 1 >"$cpu1" || exit 1
			n=$((n + 1))
		fi
		sleep 0.2
	done
	echo "$n" >"$1"
}

# kind_cycles N KIND...: N times, load cprof, start a profile of the next
# KIND in turn with a reader blocked in read(), and rmmod a moment later;
# sets COMPLETE to the number of streams that ended with reason unload.
kind_cycles() {
	local n=$1 i reader
	local -a kinds=("${@:2}")
	COMPLETE=0
	for ((i = 0; i < n; i++)); do
		kload
		ctl "kind=${kinds[i % ${#kinds[@]}]}" seconds=30
		cat /proc/cprof/profile >"$OUT/kcycle.raw" 2>/dev/null &
		reader=$!
		sleep 0.$((RANDOM % 7 + 2))
		rmmod cprof || fail "${kinds[i % ${#kinds[@]}]} cycle $((i + 1)): rmmod failed"
		wait "$reader" || true
		if [[ -s $OUT/kcycle.raw ]] &&
			"$WORKLOADS/streamtext" <"$OUT/kcycle.raw" >"$OUT/kcycle.txt" 2>/dev/null &&
			rawk '$1 == "E" && $E_reason == 2 { ok = 1 } END { exit !ok }' "$OUT/kcycle.txt"; then
			COMPLETE=$((COMPLETE + 1))
		fi
	done
}

# --- 10 kHz on every CPU under a fork/exec storm
kload freq=10000 seconds=20 budget=50
"$WORKLOADS/cpuburn" 30 >/dev/null &
burner=$!
storm 2
profile "$OUT/storm.raw"
touch "$OUT/stop"
wait
execs=$(cat "$OUT"/storm.* | awk '{ n += $1 } END { print n }')
read -r samples pids end_samples < <(rawk '$1 == "S" { n++; p[$S_pid] = 1 }
	$1 == "E" { e = $E_samples } END { printf "%d %d %d\n", n, length(p), e }' "$OUT/storm.raw.txt")
echo "storm: $execs execs; stream: $samples samples of $pids processes (END says $end_samples); $(stats_line)"
((samples > 0 && samples == end_samples)) || fail "the storm's stream has $samples samples, its END $end_samples"
((pids > 20)) || fail "only $pids processes sampled during the storm"
kill "$burner" 2>/dev/null || true
rmmod cprof || fail "rmmod after the storm failed"

# --- the storm again under cprof-dump -d, tables evicted as others load
[[ -x $CPROF_DUMP ]] || fail "no cprof-dump at $CPROF_DUMP"
kload budget=50
ctl unwind_mb=1
# frame-pointer code (cpuburn) walks without tables: this one needs them
"$WORKLOADS/qsortsplit" $((30 * ${CPROF_SLOW:-1})) >/dev/null &
burner=$!
storm 2
(
	i=0
	while [[ ! -e $OUT/stop ]]; do
		"$WORKLOADS/badtables" fill /proc/cprof/unwind $((i++ % 64 + 100)) 16000 || exit 1
	done
	echo "$i" >"$OUT/fills"
) &
filler=$!
table0=$(stat_of user_table)
"$CPROF_DUMP" -d 15 -F 10000 -f folded -o "$OUT/dstorm.folded" 2>"$OUT/dstorm.err" ||
	fail "cprof-dump -d through the storm failed: $(cat "$OUT/dstorm.err")"
touch "$OUT/stop"
wait "$filler" || fail "writing tables of no file during the storm failed"
wait
cat "$OUT/dstorm.err"
stacks=$(wc -l <"$OUT/dstorm.folded")
echo "storm under cprof-dump -d: $stacks stacks; tables $(stat_of unwind_tables)" \
	"($(stat_of unwind_bytes) bytes, $(stat_of unwind_evicted) evicted)," \
	"walks with a table $(($(stat_of user_table) - table0)), $(cat "$OUT/fills") tables of no file" \
	"written; $(stats_line)"
((stacks > 0)) || fail "cprof-dump -d wrote no stacks"
(($(stat_of user_table) > table0)) || fail "no walk used a table during the storm"
(($(stat_of unwind_bytes) <= 1048576)) || fail "unwind_bytes over unwind_mb=1"
kill "$burner" 2>/dev/null || true
rmmod cprof || fail "rmmod after the storm under cprof-dump failed"

# --- 100 load/unload cycles with a reader
"$WORKLOADS/cpuburn" 600 >/dev/null &
burner=$!
unload_cycles 100 2000 >"$OUT/cycles.log"
kill "$burner" 2>/dev/null || true
echo "load/unload: 100 cycles, $COMPLETE streams ended with reason unload"
((COMPLETE >= 50)) || fail "only $COMPLETE of 100 readers got a complete stream at rmmod"
[[ ! -d /proc/cprof ]] || fail "/proc/cprof left behind"

# cprof-dump -d as the reader: rmmod while it loads tables and reads.
"$WORKLOADS/cpuburn" 600 >/dev/null &
burner=$!
written=0
for ((i = 1; i <= 20; i++)); do
	kload
	rm -f "$OUT/dcycle.folded"
	"$CPROF_DUMP" -d 30 -F 2000 -f folded -o "$OUT/dcycle.folded" 2>"$OUT/dcycle.err" &
	dump=$!
	if ((i > 10)); then
		wait_profiling $((600 * ${CPROF_SLOW:-1})) ||
			fail "cycle $i: cprof-dump -d did not start its profile"
	fi
	sleep 0.$((RANDOM % 9 + 1))
	rmmod cprof || fail "cycle $i with cprof-dump -d: rmmod failed"
	rc=0
	wait "$dump" || rc=$?
	echo "cycle $i with cprof-dump -d: exit $rc: $(tail -n 1 "$OUT/dcycle.err")" >>"$OUT/dcycles.log"
	((rc < 128)) || fail "cprof-dump -d died of signal $((rc - 128)) at rmmod: $(cat "$OUT/dcycle.err")"
	((i <= 10)) || [[ ! -s $OUT/dcycle.folded ]] || written=$((written + 1))
done
kill "$burner" 2>/dev/null || true
echo "load/unload: 20 cycles with cprof-dump -d as the reader, none killed by a signal;" \
	"of the 10 unloaded mid-profile, $written wrote their profile"
((written >= 5)) || fail "only $written of 10 cprof-dump -d unloaded mid-profile wrote a profile"
[[ ! -d /proc/cprof ]] || fail "/proc/cprof left behind"

# --- off the CPU: the probe through the storm and CPU 1's hotplug
cpu1=/sys/devices/system/cpu/cpu1/online
"$WORKLOADS/offwait" 600 >/dev/null &
waiter=$!
kload budget=50
storm 2
plug "$OUT/offplugs" &
plugger=$!
e0=$(stat_of offcpu_events)
"$CPROF_DUMP" -d 600 -F 2000 --kind wall -f folded -o "$OUT/wall.folded" 2>"$OUT/wall.err" &
dump=$!
# the sleeper's nap_long is under libc's nanosleep, walked through with
# libc's table, which the profile loads as it starts: seconds on the
# debug kernel under the storm (the check failed when it came late); 15 s
# of profile once it is in the module
wait_table /lib/x86_64-linux-gnu/libc.so.6 || fail "libc's table was not loaded"
sleep 15
ctl stop=1
wait "$dump" || fail "cprof-dump -d --kind wall through the storm failed: $(cat "$OUT/wall.err")"
touch "$OUT/stop"
wait "$plugger" || fail "CPU 1 hotplug during the off-CPU profile failed"
kill "$waiter"
wait
events=$(($(stat_of offcpu_events) - e0))
cat "$OUT/wall.err"
echo "wall through the storm: $(wc -l <"$OUT/wall.folded") stacks, $events switches" \
	"recorded ($(stat_of offcpu_full) without a slot), $(cat "$OUT/offplugs") hotplug" \
	"cycles of cpu1; $(stats_line)"
((events > 0)) || fail "no switch recorded through the storm"
grep -q '^sleeper;.*nap_long;.*schedule_\[k\]' "$OUT/wall.folded" ||
	fail "offwait's sleeper not in the wall profile"
rmmod cprof || fail "rmmod after the off-CPU storm failed"
# off-CPU only, then wall (ticks and switches together), in turn
kind_cycles 10 offcpu wall
offdone=$COMPLETE
echo "off-CPU and wall load/unload: 10 cycles, $offdone streams ended with reason unload"
((offdone >= 5)) || fail "only $offdone of 10 off-CPU and wall readers got a complete stream at rmmod"
[[ ! -d /proc/cprof ]] || fail "/proc/cprof left behind"

# --- tasks created: the probe through the storm and CPU 1's hotplug
kload budget=50
storm 2
plug "$OUT/tcplugs" &
plugger=$!
c0=$(stat_of threadcreate_events)
"$CPROF_DUMP" -d 10 --kind threadcreate -f folded -o "$OUT/tc.folded" 2>"$OUT/tc.err" ||
	fail "cprof-dump -d --kind threadcreate through the storm failed: $(cat "$OUT/tc.err")"
touch "$OUT/stop"
wait "$plugger" || fail "CPU 1 hotplug during the threadcreate profile failed"
wait
created=$(($(stat_of threadcreate_events) - c0))
cat "$OUT/tc.err"
echo "threadcreate through the storm: $created creations recorded" \
	"($(stat_of threadcreate_skipped) over budget), $(awk '{ c += $NF } END { print c + 0 }' "$OUT/tc.folded")" \
	"counted in the profile, $(cat "$OUT/tcplugs") hotplug cycles of cpu1; $(stats_line)"
((created > 0)) || fail "no task creation recorded through the storm"
grep -q ';_Fork;.*copy_process_\[k\]' "$OUT/tc.folded" ||
	fail "the storm's forks are not in the threadcreate profile"
rmmod cprof || fail "rmmod after the threadcreate storm failed"
storm 1
kind_cycles 6 threadcreate
tcdone=$COMPLETE
touch "$OUT/stop"
wait
echo "threadcreate load/unload: 6 cycles, $tcdone streams ended with reason unload"
((tcdone >= 3)) || fail "only $tcdone of 6 threadcreate readers got a complete stream at rmmod"
[[ ! -d /proc/cprof ]] || fail "/proc/cprof left behind"

# --- lock contention: both probes through the storm and CPU 1's hotplug
# contend() FILE: mutexhold contending its mutex for 600 s (in $holder)
contend() {
	"$WORKLOADS/mutexhold" 4 600 >"$1" &
	holder=$!
	wait_lines "$1" 1 || fail "mutexhold did not start"
	kill -USR1 "$holder"
}
contend "$OUT/mutexhold.out"
kload budget=50
storm 2
plug "$OUT/mxplugs" &
plugger=$!
m0=$(stat_of mutex_events)
"$CPROF_DUMP" -d 10 --kind mutex -f folded -o "$OUT/mx.folded" 2>"$OUT/mx.err" ||
	fail "cprof-dump -d --kind mutex through the storm failed: $(cat "$OUT/mx.err")"
touch "$OUT/stop"
wait "$plugger" || fail "CPU 1 hotplug during the mutex profile failed"
kill "$holder"
wait
woken=$(($(stat_of mutex_events) - m0))
cat "$OUT/mx.err"
echo "mutex through the storm: $woken wake-ups recorded of $(stat_of mutex_noted) futex" \
	"sleeps noted ($(stat_of mutex_full) without a slot, $(stat_of mutex_skipped) over budget)," \
	"$(cat "$OUT/mxplugs") hotplug cycles of cpu1; $(stats_line)"
((woken > 0)) || fail "no futex wake-up recorded through the storm"
# (the holder's frame at least: mutexhold's table may come after the
# profile on this kernel, and libc's leaf hides hold_few and hold_many
# from a frame-pointer walk)
grep -q ';hold\(er\|_few\|_many\);.*try_to_wake_up_\[k\]' "$OUT/mx.folded" ||
	fail "mutexhold's unlocks are not in the mutex profile: $(head -n 3 "$OUT/mx.folded")"
rmmod cprof || fail "rmmod after the mutex storm failed"
contend "$OUT/mutexhold2.out"
storm 1
kind_cycles 6 mutex
mxdone=$COMPLETE
touch "$OUT/stop"
kill "$holder"
wait
echo "mutex load/unload: 6 cycles, $mxdone streams ended with reason unload"
((mxdone >= 3)) || fail "only $mxdone of 6 mutex readers got a complete stream at rmmod"
[[ ! -d /proc/cprof ]] || fail "/proc/cprof left behind"

# --- the timeline: both probes and the stacks through the storm and CPU
# 1's hotplug
contend "$OUT/mutexhold3.out"
kload budget=50
storm 2
plug "$OUT/trplugs" &
plugger=$!
"$CPROF_DUMP" -d 10 --kind trace -o "$OUT/trace.json" 2>"$OUT/trace.err" ||
	fail "cprof-dump -d --kind trace through the storm failed: $(cat "$OUT/trace.err")"
touch "$OUT/stop"
wait "$plugger" || fail "CPU 1 hotplug during the trace profile failed"
kill "$holder"
wait
cat "$OUT/trace.err"
runs=$(python3 -c 'import json, sys
t = json.load(open(sys.argv[1]))
print(sum(1 for e in t["traceEvents"] if e["ph"] == "X" and e["name"] == "mutexhold"))' "$OUT/trace.json") ||
	fail "the trace through the storm is no JSON"
echo "trace through the storm: $(stat_of trace_switches) switches, $(stat_of trace_wakes)" \
	"wake-ups, $(stat_of trace_stacks) stacks ($(stat_of trace_skipped) over budget)," \
	"$runs runs of mutexhold in the JSON, $(cat "$OUT/trplugs") hotplug cycles of cpu1; $(stats_line)"
((runs > 0)) || fail "mutexhold's runs are not in the trace"
rmmod cprof || fail "rmmod after the trace storm failed"
storm 1
kind_cycles 6 trace
trdone=$COMPLETE
touch "$OUT/stop"
wait
echo "trace load/unload: 6 cycles, $trdone streams ended with reason unload"
((trdone >= 3)) || fail "only $trdone of 6 trace readers got a complete stream at rmmod"
[[ ! -d /proc/cprof ]] || fail "/proc/cprof left behind"

# --- allocations: the uprobes through the storm, CPU 1's hotplug, rmmod
# allocate() FILE: heaper allocating, a round every 0.2 s (in $heaper,
# its rounds by $hround)
allocate() {
	"$WORKLOADS/heaper" 2048 6144 16384 >"$1" &
	heaper=$!
	wait_lines "$1" 1 || fail "heaper did not start"
	( while kill -USR1 "$heaper" 2>/dev/null; do sleep 0.2; done ) &
	hround=$!
}
allocate "$OUT/heaper.out"
hpid=$(awk '$1 == "ready" { print $2 }' "$OUT/heaper.out")
kload budget=50
storm 2
plug "$OUT/hpplugs" &
plugger=$!
h0=$(stat_of heap_events)
"$CPROF_DUMP" -d 10 --kind heap -p "$hpid" --rate 4096 -f folded \
	-o "$OUT/hp.folded" 2>"$OUT/hp.err" ||
	fail "cprof-dump -d --kind heap through the storm failed: $(cat "$OUT/hp.err")"
touch "$OUT/stop"
wait "$plugger" || fail "CPU 1 hotplug during the heap profile failed"
sampled=$(($(stat_of heap_events) - h0))
cat "$OUT/hp.err"
echo "heap through the storm: $sampled allocations recorded, $(stat_of heap_frees) frees" \
	"($(stat_of heap_full) without room, $(stat_of heap_skipped) over budget)," \
	"$(cat "$OUT/hpplugs") hotplug cycles of cpu1; $(stats_line)"
((sampled > 0)) || fail "no allocation recorded through the storm"
grep -q ';keep_\(few\|many\)[; ]' "$OUT/hp.folded" ||
	fail "heaper's allocations are not in the heap profile"
# the addresses cprof-dump gave, for profiles without it
mapfile -t heapset < <(grep -E '^(pid|heap_[a-z_]+)=' /proc/cprof/ctl)
malloc_at=$(sed -n 's/^heap_malloc=//p' /proc/cprof/ctl)
rmmod cprof || fail "rmmod after the heap storm failed"
storm 1
hpdone=0
for ((i = 0; i < 6; i++)); do
	kload
	ctl kind=heap seconds=30 heap_rate=4096 "${heapset[@]}"
	cat /proc/cprof/profile >"$OUT/kcycle.raw" 2>/dev/null &
	reader=$!
	sleep 0.$((RANDOM % 7 + 2))
	rmmod cprof || fail "heap cycle $((i + 1)): rmmod failed"
	wait "$reader" || true
	if [[ -s $OUT/kcycle.raw ]] &&
		"$WORKLOADS/streamtext" <"$OUT/kcycle.raw" >"$OUT/kcycle.txt" 2>/dev/null &&
		rawk '$1 == "E" && $E_reason == 2 { ok = 1 } END { exit !ok }' "$OUT/kcycle.txt"; then
		hpdone=$((hpdone + 1))
	fi
	byte=$(dd if="/proc/$hpid/mem" bs=1 count=1 skip=$((malloc_at)) iflag=skip_bytes 2>/dev/null |
		od -An -tx1 | tr -d ' \n')
	[[ $byte != cc ]] || fail "heap cycle $((i + 1)): heaper's malloc still a breakpoint after rmmod"
done
touch "$OUT/stop"
kill "$hround" "$heaper"
wait
echo "heap load/unload: 6 cycles, $hpdone streams ended with reason unload"
((hpdone >= 3)) || fail "only $hpdone of 6 heap readers got a complete stream at rmmod"
[[ ! -d /proc/cprof ]] || fail "/proc/cprof left behind"

# --- thread snapshots: threads starting and exiting, CPU 1 going offline
# and back, and rmmod mid-pass
"$WORKLOADS/parked" 2000 >"$OUT/parked.out" &
parked=$!
wait_lines "$OUT/parked.out" 3 || fail "parked did not start its threads"
kload
storm 2
snaps=0
for ((i = 1; i <= 10; i++)); do
	plug=
	if ((i % 2)) && [[ -w $cpu1 ]]; then
		(echo 0 >"$cpu1" && sleep 0.2 && echo 1 >"$cpu1") &
		plug=$!
	fi
	"$CPROF_DUMP" --kind threads -f folded -o "$OUT/snap.folded" 2>"$OUT/snap.err" ||
		fail "snapshot $i through the storm failed: $(cat "$OUT/snap.err")"
	[[ -z $plug ]] || wait "$plug" || fail "CPU 1 hotplug during snapshot $i failed"
	snaps=$((snaps + $(awk '{ n += $NF } END { print n + 0 }' "$OUT/snap.folded")))
done
touch "$OUT/stop"
# the storm's loops end; parked goes on
mapfile -t jobs_left < <(jobs -p | grep -vx "$parked")
((${#jobs_left[@]} == 0)) || wait "${jobs_left[@]}" || true
echo "snapshots through the storm: 10, $snaps threads in all"
rmmod cprof || fail "rmmod after the snapshots failed"
snapdone=0
for ((i = 1; i <= 10; i++)); do
	kload
	ctl kind=threads
	cat /proc/cprof/profile >"$OUT/snapcycle.raw" 2>/dev/null &
	reader=$!
	sleep 0.0$((RANDOM % 9 + 1))
	rmmod cprof || fail "snapshot cycle $i: rmmod failed"
	wait "$reader" || true
	if [[ -s $OUT/snapcycle.raw ]] &&
		"$WORKLOADS/streamtext" <"$OUT/snapcycle.raw" >"$OUT/snapcycle.txt" 2>/dev/null &&
		rawk '$1 == "E" { ok = 1 } END { exit !ok }' "$OUT/snapcycle.txt"; then
		snapdone=$((snapdone + 1))
	fi
done
kill "$parked"
wait "$parked" 2>/dev/null || true
echo "snapshot load/unload: 10 cycles, $snapdone streams well-formed to their END"
((snapdone >= 5)) || fail "only $snapdone of 10 snapshot readers got a complete stream at rmmod"
[[ ! -d /proc/cprof ]] || fail "/proc/cprof left behind"

# --- 60 s of snapshots back to back while threads exit, with the debug
# build's delay between a thread's checks and its register copy (the
# window an exiting thread's stack may be freed in): every copy that cannot
# be proven is dropped, none reads a freed stack (KASAN would report it)
if [[ -n ${CPROF_KO_DEBUG:-} ]]; then
	insmod "$CPROF_KO_DEBUG" regs_delay_us=1000 || fail "insmod $CPROF_KO_DEBUG failed"
	"$WORKLOADS/threads" 90 2000 >"$OUT/exits.out" &
	churner=$!
	wait_lines "$OUT/exits.out" 2 || fail "threads did not start its threads"
	ctl kind=threads pid="$churner"
	end=$((SECONDS + 60))
	n=0
	while ((SECONDS < end)); do
		cat /proc/cprof/profile >"$OUT/exits.raw" || fail "snapshot $((n + 1)) of the exit storm failed"
		n=$((n + 1))
	done
	kill "$churner" 2>/dev/null || true
	wait "$churner" 2>/dev/null || true
	"$WORKLOADS/streamtext" <"$OUT/exits.raw" >"$OUT/exits.txt" || fail "the exit storm's last snapshot is malformed"
	dropped=$(stat_of threads_regs_dropped)
	echo "exit storm: $n snapshots in 60 s, $dropped register copies of exiting threads dropped"
	((dropped >= 1)) || fail "the exit storm dropped no register copy: the race did not happen"
	rmmod cprof || fail "rmmod after the exit storm failed"
fi

# --- 50 hotplug cycles of CPU 1 during one profile
[[ -w $cpu1 ]] || { echo "no CPU hotplug here"; exit 0; }
"$WORKLOADS/cpuburn" 600 >/dev/null &
burner=$!
"$WORKLOADS/cpuburn" 600 >/dev/null &
burner2=$!
kload freq=2000 seconds=600
"$CPROF_DUMP" --load-unwind-tables 2>"$OUT/hp.load.err" ||
	fail "loading the running programs' tables failed: $(cat "$OUT/hp.load.err")"
tail -n 1 "$OUT/hp.load.err"
reader_start "$OUT/hp.raw"
for i in $(seq 1 50); do
	echo 0 >"$cpu1" || fail "hotplug cycle $i: cpu1 did not go offline"
	sleep 0.1
	echo 1 >"$cpu1" || fail "hotplug cycle $i: cpu1 did not come back"
	sleep 0.2
done
reader_stop
kill "$burner" "$burner2" 2>/dev/null || true
"$WORKLOADS/streamtext" <"$OUT/hp.raw" >"$OUT/hp.txt" || fail "the hotplug profile's stream is malformed"
read -r c0 c1 < <(rawk '$1 == "S" { n[$S_cpu]++ } END { printf "%d %d\n", n[0], n[1] }' "$OUT/hp.txt")
echo "hotplug: 50 cycles of cpu1 in one profile: cpu0 $c0 samples, cpu1 $c1 samples; $(stats_line)"
((c0 > 0 && c1 > 0)) || fail "a CPU stopped sampling across hotplug (cpu0 $c0, cpu1 $c1)"
rmmod cprof || fail "rmmod after hotplug failed"
echo "d_stress: ok"
