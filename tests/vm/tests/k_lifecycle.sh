#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# k_lifecycle: rmmod is safe at any time.
#   - 20 load/unload cycles, each while profiling at 1 kHz with a reader
#     blocked in read() and a busy CPU: rmmod succeeds, the reader gets a
#     well-formed stream that ends with reason "unload" (or EOF/EIO if it
#     had not read yet), no warning, oops or taint (the harness checks);
#   - CPU 1 goes offline and online during a profile: both CPUs' samples
#     keep coming, CPU 1's stop while it is offline and resume after;
#   - three times: CPU 1 goes offline during an off-CPU profile while its
#     ring is over half full and its reader holds off (so that every switch
#     CPU 1 records, its parking threads' included, kicks the reader, at
#     most every 2 ms), and rmmod, CPU 1 still offline, returns within 10 s
#     (its own wait for the reader is 5 s): no kick is left pending on the
#     offline CPU (on PREEMPT_RT a soft irq_work is, its CPU's irq_work
#     thread parked before the CPU leaves cpu_online_mask).
# vm-kernels: 6.1 6.12-rt
# vm-timeout: 300
set -euo pipefail
# shellcheck source=../lib/kprof.sh
. "$REPO/tests/vm/lib/kprof.sh"

"$WORKLOADS/cpuburn" 200 >/dev/null &
burner=$!
unload_cycles 20 1000
echo "20 cycles: $COMPLETE streams ended with reason unload"
((COMPLETE >= 15)) || fail "only $COMPLETE of 20 readers got a complete stream at rmmod"
[[ ! -d /proc/cprof ]] || fail "/proc/cprof left behind"

cpu1=/sys/devices/system/cpu/cpu1/online
[[ -w $cpu1 ]] || { echo "no CPU hotplug here"; kill "$burner"; exit 77; }
"$WORKLOADS/cpuburn" 200 >/dev/null &
burner2=$!
# Going offline and online can take seconds on a slow (debug) kernel: the
# profile runs until cpu1 has been back for 3 s.
kload freq=500 seconds=120
reader_start "$OUT/h.raw"
sleep 3
echo 0 >"$cpu1"
sleep 2
echo 1 >"$cpu1"
sleep 3
reader_stop
"$WORKLOADS/streamtext" <"$OUT/h.raw" >"$OUT/h.raw.txt" || fail "the hotplug profile's stream is malformed"
kill "$burner" "$burner2"
rmmod cprof || fail "rmmod after hotplug failed"
# The 2 s offline window shows as the one long gap between cpu1's samples,
# with samples before and after it; cpu0 has no such gap.
read -r before gap after < <(rawk '$1 == "S" && $S_cpu == 1 {
		if (last && $S_time - last > maxgap) { maxgap = $S_time - last; before = n }
		last = $S_time; n++
	} END { printf "%d %d %d\n", before, maxgap / 1e6, n - before }' "$OUT/h.raw.txt")
read -r c0 gap0 < <(rawk '$1 == "S" && $S_cpu == 0 {
		if (last && $S_time - last > maxgap) maxgap = $S_time - last
		last = $S_time; n++
	} END { printf "%d %d\n", n, maxgap / 1e6 }' "$OUT/h.raw.txt")
echo "cpu1: $before samples, a ${gap} ms gap, $after samples; cpu0: $c0 samples, longest gap ${gap0} ms"
((before >= 100 && after >= 100)) || fail "cpu1 did not sample both before ($before) and after ($after) going offline"
((gap >= 1500)) || fail "cpu1 kept sampling while offline (longest gap ${gap} ms)"
((c0 >= 500 && gap0 * 2 < gap)) || fail "cpu0 stopped sampling during cpu1's hotplug (longest gap ${gap0} ms)"

# cpu1_events: the switches CPU 1 recorded (mapfile: quick enough to poll)
cpu1_events() {
	local -a lines
	mapfile -t lines </proc/cprof/stats
	if [[ ${lines[ev_line]:-} != "cpu1.offcpu_events "* ]]; then
		for ((ev_line = 0; ev_line < ${#lines[@]}; ev_line++)); do
			[[ ${lines[ev_line]} == "cpu1.offcpu_events "* ]] && break
		done
	fi
	echo "${lines[ev_line]#* }"
}
ev_line=0
exec {nap_fd}<> <(:)
nap() { read -rt "$1" -u "$nap_fd" || true; }
hold=/tmp/k_lifecycle.hold ack=/tmp/k_lifecycle.ack
# offwait's threads on CPU 1: a few hundred switches a second
"$WORKLOADS/offwait" 600 >/dev/null &
waiter=$!
for ((round = 1; round <= 3; round++)); do
	taskset -a -p -c 1 "$waiter" >/dev/null
	kload buffer_kb=64
	# one frame a stack: 104 to 112 bytes a switch (its OFFCPU and ONCPU
	# records), so CPU 1's 64 KiB is half full after 293 to 315 switches
	ctl kind=offcpu seconds=120 depth=1 budget=50
	rm -f "$hold" "$ack"
	"$WORKLOADS/holdread" /proc/cprof/profile "$hold" "$ack" >/dev/null &
	READER=$!
	wait_profiling || fail "round $round: the off-CPU profile did not start"
	sleep 1
	touch "$hold"
	for ((i = 0; i < 500 * ${CPROF_SLOW:-1}; i++)); do
		[[ -e $ack ]] && break
		nap 0.01
	done
	[[ -e $ack ]] || fail "round $round: the reader did not stop reading"
	# the rings just drained: CPU 1's over half full, far from full, by the
	# time it goes down (its teardown records 50 to 100 more)
	e0=$(cpu1_events)
	for ((i = 0; i < 1000 * ${CPROF_SLOW:-1}; i++)); do
		held=$(($(cpu1_events) - e0))
		((held >= 330)) && break
		nap 0.01
	done
	((held >= 330)) || fail "round $round: CPU 1 recorded only $held switches in $((i / 100)) s"
	kill -STOP "$waiter"
	echo 0 >"$cpu1"
	rm -f "$hold"
	t0=${EPOCHREALTIME/./}
	rmmod cprof &
	unloader=$!
	# (until it is gone or a zombie, for 10 s at most)
	while [[ $(ps -o stat= -p "$unloader") == [!Z]* ]] &&
		((${EPOCHREALTIME/./} - t0 < 10000000)); do
		nap 0.1
	done
	took=$(((${EPOCHREALTIME/./} - t0) / 1000))
	# CPU 1 back: a kick left pending there runs, and a stuck rmmod returns
	echo 1 >"$cpu1"
	kill -CONT "$waiter"
	wait "$unloader" || fail "round $round: rmmod after CPU 1 went offline failed"
	wait "$READER" || true
	echo "round $round: CPU 1 offline $held switches after the last read: rmmod took ${took} ms"
	((took < 10000)) || fail "round $round: rmmod with cpu1 offline took ${took} ms"
done
kill "$waiter"
echo "k_lifecycle: ok"
