#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# guest.sh RESULTS: the test runner inside the VM, in the host's / that
# init.sh made the root.  RESULTS is the writable results folder
# (the same path as on the host); run.sh left there:
#   vm.env   REPO=, RESULTS=, CPROF_KO=, CPROF_KO_DEBUG=, CPROF_DUMP=,
#            WORKLOADS= lines, and
#            DEADLINE= (epoch seconds, 0 for none), ICOUNT=, CPU=, QEMU=,
#            COMMIT=, DATE= (what the run was: for tests/bench/summary.sh
#            and whoever reads the results)
#   plan     one "NAME TIMEOUT SCRIPT" line per test, SCRIPT relative to REPO
#
# For each test: measure how slow the VM is (CPROF_SLOW, below), clear the
# kernel log, run SCRIPT with cwd = REPO under `timeout` (TIMEOUT times
# CPROF_SLOW, cut to DEADLINE), then kill what it left behind, rmmod cprof if it is still
# loaded, and fail the test on a failing rmmod, a kernel warning in the log
# or a new taint beyond O and E.  Results go to the second serial port
# (ttyS1): "SLOW N" before each test, one "RESULT NAME pass|fail|skip
# SECONDS [NOTE]" line per test, then "DONE": the host trusts nothing else.
# Meanwhile "ALIVE" every 10 s from a real-time thread the OOM killer
# leaves alone: when they stop, run.sh asks QEMU where the CPUs are, and
# names their addresses by what this writes: the kernel's text address
# (KASLR) to RESULTS/ktext, and when asked, its symbols to
# RESULTS/kallsyms.
set -euo pipefail

results=$1
# shellcheck source=/dev/null
. "$results/vm.env"
: "${REPO:?}" "${CPROF_KO:?}" "${CPROF_KO_DEBUG:?}" "${CPROF_DUMP:?}" "${WORKLOADS:?}"

exec 3>/dev/ttyS1
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
KVER=$(uname -r)

# Kernel log lines that fail a test.  panic_on_warn=1 turns WARN into a
# panic, so most of these show up only when the kernel survives them
# ("BUG: sleeping function called from invalid context", KASAN, KFENCE,
# UBSAN, lockdep's and RCU's reports, debug objects, hung tasks...).
warn_re='BUG:|WARNING:|Oops|Call Trace|UBSAN:|KASAN:|KFENCE:|ODEBUG:|INFO: |kernel BUG|general protection fault|rcu_.*detected stall'
# Taints that are expected: O (out-of-tree module) and E (unsigned module).
taint_ok=$((4096 | 8192))

taint_bad() {
	echo $(($(</proc/sys/kernel/tainted) & ~taint_ok))
}

note() {
	echo "cprof-vm: $*" >>"$log"
	notes+="${notes:+; }$*"
}

# The heartbeat: a read that times out, not a sleep(1) forked every time.
heartbeat() {
	local fifo
	fifo=$(mktemp -u /tmp/heartbeat.XXXXXX)
	mkfifo "$fifo"
	exec 4<>"$fifo"
	rm -f "$fifo"
	while echo ALIVE >&3; do
		read -r -t 10 -u 4 _ || :
	done
}
heartbeat &
hb=$!
chrt -f -p 1 "$hb" >/dev/null
echo -1000 >"/proc/$hb/oom_score_adj"

# The kernel must come up clean before any test is trusted.
dmesg >"$results/boot.dmesg"
if grep -Eq "$warn_re" "$results/boot.dmesg"; then
	echo "BOOT fail kernel warning during boot: $(grep -Em 1 "$warn_re" "$results/boot.dmesg")" >&3
elif [[ $(taint_bad) != 0 ]]; then
	echo "BOOT fail kernel tainted at boot: $(</proc/sys/kernel/tainted)" >&3
else
	echo "BOOT ok" >&3
fi
# where the kernel's text is in this boot, and its symbols if run.sh asks
# (KALLSYMS=1 in vm.env, once per kernel image)
awk '$3 == "_text" { print $1; exit }' /proc/kallsyms >"$results/ktext"
if [[ -n ${KALLSYMS:-} ]]; then
	awk 'NF == 3 && $2 ~ /^[tTwW]$/' /proc/kallsyms >"$results/kallsyms"
fi

# slowness: how many times slower than a healthy TCG guest this one runs
# now, 1 to 10.  The measure is what the tests spend their time on: starting
# a dynamically linked program whose libraries come over 9p (three runs of
# /bin/true, against 150 ms a run on a healthy host).  A host starved of CPU
# or with a cold disk cache can be 20 times slower; the tests' time limits,
# and their own wall-time bounds (CPROF_SLOW), stretch by this factor.
slowness() {
	local t0=${EPOCHREALTIME/./} ms f
	/bin/true && /bin/true && /bin/true
	ms=$(((${EPOCHREALTIME/./} - t0) / 3000))
	f=$(((ms + 149) / 150))
	((f >= 1)) || f=1
	((f <= 10)) || f=10
	echo "$f $ms"
}

# DEADLINE (epoch seconds, from run.sh; the guest's clock is set from the
# host's) is when this kernel's share of make check's time runs out: a test that cannot get its time limit before it
# is cut short, and none starts within 20 s of it.
deadline=${DEADLINE:-0}

while read -r name base_timeout script; do
	out=$results/$name
	log=$results/$name.log
	notes=
	mkdir -p "$out"
	: >"$log"
	read -r slow exec_ms < <(slowness)
	timeout=$((base_timeout * slow))
	if ((deadline > 0)); then
		left=$((deadline - EPOCHSECONDS))
		if ((left < 20)); then
			echo "RESULT $name fail - not run: make check's time budget ran out (CPROF_CHECK_MINUTES)" >&3
			continue
		fi
		((timeout <= left)) || timeout=$left
	fi
	echo "SLOW $slow" >&3
	echo "cprof-vm: ${exec_ms} ms to start a program: time limit ${timeout}s, CPROF_SLOW=$slow" >>"$log"
	dmesg -C
	taint_before=$(taint_bad)
	start=$(date +%s%N)

	# timeout(1) makes itself a process group leader: $! names the group of
	# everything the test started.
	set +e
	(
		cd "$REPO"
		exec env -i PATH="$PATH" HOME=/tmp TMPDIR=/tmp LC_ALL=C.UTF-8 TERM=dumb \
			REPO="$REPO" KVER="$KVER" CPROF_KO="$CPROF_KO" CPROF_KO_DEBUG="$CPROF_KO_DEBUG" \
			CPROF_DUMP="$CPROF_DUMP" \
			WORKLOADS="$WORKLOADS" OUT="$out" CPROF_SLOW="$slow" \
			timeout -k 10 "$timeout" "$REPO/$script"
	) </dev/null >>"$log" 2>&1 &
	pgid=$!
	wait "$pgid"
	rc=$?
	set -e
	kill -KILL -- "-$pgid" 2>/dev/null || true
	secs=$(( ($(date +%s%N) - start) / 1000000 ))
	secs=$((secs / 1000)).$(printf '%03d' $((secs % 1000)))

	case $rc in
	0) status=pass ;;
	77) status=skip ;;
	124 | 137) status=fail; note "timed out after ${timeout}s" ;;
	*)
		status=fail
		# the test's own reason (fail()'s "NAME.sh: FAIL: WHY"), so that
		# the one line make check repeats at its end says it
		why=$(grep -a ': FAIL: ' "$log" | tail -n 1 | cut -c1-300) || true
		note "exit status $rc${why:+: ${why#*: FAIL: }}"
		;;
	esac

	if grep -q '^cprof ' /proc/modules; then
		if ! rmmod cprof >>"$log" 2>&1; then
			status=fail
			note "rmmod cprof failed after the test"
		fi
	fi
	dmesg >"$results/$name.dmesg"
	if grep -Eq "$warn_re" "$results/$name.dmesg"; then
		status=fail
		note "kernel warning: $(grep -Em 1 "$warn_re" "$results/$name.dmesg")"
	fi
	taint_after=$(taint_bad)
	if [[ $taint_after != "$taint_before" ]]; then
		status=fail
		note "kernel taint $(</proc/sys/kernel/tainted) (was $taint_before beyond O/E)"
	fi
	echo "RESULT $name $status $secs $notes" >&3
done <"$results/plan"

kill "$hb" 2>/dev/null || true
echo DONE >&3
