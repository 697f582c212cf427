#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# d_stress: the module under load, for make check-debug's kernel (KASAN,
# lockdep, PROVE_RCU_LIST, debug objects), where a race or a misuse shows
# as a report the harness fails on.  Run only when named (d_ tests are not
# in the default plan).
#   - 10 kHz on every CPU for 20 s while a fork/exec storm runs: every
#     sample of a new process sends its mapping request through maps.c;
#   - 100 load/unload cycles, each with a reader blocked in read();
#   - 50 CPU hotplug cycles of CPU 1 during one profile.
# Every stream must be well-formed; the figures are printed.
# vm-timeout: 1200
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

# --- 100 load/unload cycles with a reader
"$WORKLOADS/cpuburn" 600 >/dev/null &
burner=$!
unload_cycles 100 2000 >"$OUT/cycles.log"
kill "$burner" 2>/dev/null || true
echo "load/unload: 100 cycles, $COMPLETE streams ended with reason unload"
((COMPLETE >= 50)) || fail "only $COMPLETE of 100 readers got a complete stream at rmmod"
[[ ! -d /proc/cprof ]] || fail "/proc/cprof left behind"

# --- 50 hotplug cycles of CPU 1 during one profile
cpu1=/sys/devices/system/cpu/cpu1/online
[[ -w $cpu1 ]] || { echo "no CPU hotplug here"; exit 0; }
"$WORKLOADS/cpuburn" 600 >/dev/null &
burner=$!
"$WORKLOADS/cpuburn" 600 >/dev/null &
burner2=$!
kload freq=2000 seconds=600
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
