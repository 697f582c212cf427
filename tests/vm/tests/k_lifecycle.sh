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
#   - CPU 1 goes offline during an off-CPU profile with small buffers and
#     switches pinned there (pingpong: CPU 1's buffer fills to half again
#     and again, each time kicking the reader), and rmmod, CPU 1 still
#     offline, returns within 10 s (its own wait for the reader is 5 s):
#     no kick is left pending on the offline CPU (on PREEMPT_RT a soft
#     irq_work could be, its CPU's irq_work thread parked before the CPU
#     leaves cpu_online_mask).
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

kload buffer_kb=64
ctl kind=offcpu seconds=120
taskset -c 1 "$WORKLOADS/pingpong" 60 >/dev/null &
pinger=$!
reader_start "$OUT/off.raw"
sleep 2
echo 0 >"$cpu1"
t0=${EPOCHREALTIME/./}
rmmod cprof &
unloader=$!
# (until it is gone or a zombie, for 10 s at most)
while [[ $(ps -o stat= -p "$unloader") == [!Z]* ]] &&
	((${EPOCHREALTIME/./} - t0 < 10000000)); do
	sleep 0.1
done
took=$(((${EPOCHREALTIME/./} - t0) / 1000))
# CPU 1 back: a kick left pending there runs, and a stuck rmmod returns
echo 1 >"$cpu1"
wait "$unloader" || fail "rmmod after CPU 1 went offline failed"
wait "$READER" || true
kill "$pinger"
echo "rmmod with cpu1 offline after an off-CPU profile: ${took} ms"
((took < 10000)) || fail "rmmod with cpu1 offline took ${took} ms"
echo "k_lifecycle: ok"
