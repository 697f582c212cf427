#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# b_slowdown: what profiling costs a job, in rounds that decide it (make
# bench; docs/BENCHMARKS.md).  The job is b_perf's: two copies of
# tests/bench/spin (linked statically, run from the guest's memory), both
# CPUs busy.  For each frequency (99 and 999 Hz)
# and each profiler, ROUNDS rounds in the order A B B A, A the job alone,
# B the job while the profiler samples every CPU with kernel and user
# stacks, as a user runs it:
#   - cprof: cprof-dump -d -F F writing a symbolized pprof; the job starts
#     once the profile runs and cprof-dump has loaded its tables (its CPU
#     time stops growing, watched by shell builtins alone), and stop=1
#     ends the profile after it;
#   - perf: perf record -a -g -F F writing perf.data; the job starts once
#     perf has opened its events and its start-up work is done, and
#     SIGINT ends it after the job.
# Each round's ratio (B1 + B2) / (A1 + A2) pairs runs taken close
# together; the median of the rounds' ratios and its 95 % bootstrap
# interval (tests/bench/abba.awk) are the slowdown.  Beside it, each
# profiler's own CPU time for a run, start to exit (user + system of the
# profiler and the children it waited for, from bash's times in the shell
# that ran it), median: cprof-dump's includes loading tables and writing
# a symbolized profile, perf record's its start-up and perf.data (perf
# report's symbolizing comes later, not counted).
# $OUT/rounds has every run, $OUT/results the figures
# (tests/bench/summary.sh).  Nothing here fails on a figure, only on a
# profiler that does not work.
# vm-timeout: 5400
set -euo pipefail
# shellcheck source=../lib/kprof.sh
. "$REPO/tests/vm/lib/kprof.sh"
# shellcheck source=../lib/perfcmp.sh
. "$REPO/tests/vm/lib/perfcmp.sh"

ROUNDS=8
SPIN_ROUNDS=2000	# about 3 s bare under TCG on a quiet host (b_perf's)
READ_KB=64
R=$OUT/results

[[ -x $CPROF_DUMP ]] || skip "no cprof-dump ($CPROF_DUMP)"
perf_find
W=$(mktemp -d)
# The job reads nothing over 9p while it is timed: spin linked statically
# into the guest's tmpfs /tmp, and the time read as now_ms() reads it, but
# without its subshell inside the timed run.
# Under -icount shift=N,sleep=off a vCPU waiting for the host's files
# lets the clock jump to the next timer: a profiler's ticks are near
# ones, the bare job's may be far, and the bare runs came out longer.
SPIN=$W/spin
gcc -O2 -g -fno-omit-frame-pointer -static -o "$SPIN" "$REPO/tests/bench/spin.c" ||
	fail "cannot build tests/bench/spin.c"
PROF=
cleanup() {
	set +e
	[[ -z $PROF ]] || kill -INT "$PROF" 2>/dev/null
	[[ ! -e /proc/cprof/ctl ]] || echo stop=1 >/proc/cprof/ctl
	wait
	perf_restore
	rm -rf "$W"
}
trap cleanup EXIT
perf_unthrottle
kload

# Waiting for a profiler to be done starting starts no program: each new
# process is work for the profiler waited for (its mappings, its tables),
# and while kprof.sh's settle polled it with awk and sleep, cprof-dump's
# CPU time grew by 10 to 20 ticks each half second for all of settle's
# 30 s.  nap SECONDS is a read from a FIFO nobody writes.
mkfifo "$W/never"
exec 7<>"$W/never"
nap() { read -r -t "$1" -u 7 _ || true; }

# quiet PID: until PID's CPU time (user + system) grows by less than 5
# ticks in half a second, for 30 s at most
quiet() {
	local i a b
	local -a st
	for ((i = 0; i < 60; i++)); do
		read -r -a st <"/proc/$1/stat" 2>/dev/null || return 0
		a=$((st[13] + st[14]))
		nap 0.5
		read -r -a st <"/proc/$1/stat" 2>/dev/null || return 0
		b=$((st[13] + st[14]))
		((b - a < 5)) && return 0
	done
	echo "   pid $1 still busy after 30 s: the job starts anyway" >&2
}

# pid_of FILE: until FILE holds a line, for 60 s at most; PROF is it
pid_of() {
	local i
	for ((i = 0; i < 600; i++)); do
		PROF=
		[[ -f $1 ]] && read -r PROF <"$1" && [[ -n $PROF ]] && return 0
		nap 0.1
	done
	return 1
}

# profiling_on: until a profile runs (60 s at most), by builtins
profiling_on() {
	local i k v
	for ((i = 0; i < 600; i++)); do
		while read -r k v; do
			[[ $k == profiling && $v == 1 ]] && return 0
		done </proc/cprof/stats
		nap 0.1
	done
	return 1
}

# timed_job: the job; its wall time (ms) on stdout
timed_job() {
	local s p
	s=${EPOCHREALTIME/./}
	"$SPIN" "$SPIN_ROUNDS" "$READ_KB" >/dev/null &
	p=$!
	"$SPIN" "$SPIN_ROUNDS" "$READ_KB" >/dev/null
	wait "$p"
	echo $(((${EPOCHREALTIME/./} - s) / 1000))
}

# cpu_ms TIMESFILE: user + system ms of the children line of bash's times
cpu_ms() {
	awk 'NR == 2 {
		t = 0
		for (i = 1; i <= 2; i++) {
			split($i, p, "m"); sub(/s$/, "", p[2])
			t += p[1] * 60 + p[2]
		}
		printf "%d\n", t * 1000 + 0.5 }' "$1"
}

# profiled TOOL F: the job under TOOL at F Hz; "ms cpu_ms" on stdout.
# The profiler runs in a shell of its own, whose times (its one child's,
# and what that child waited for) are its CPU time.
profiled() {
	local tool=$1 f=$2 ms i n sh rc
	rm -f "$W/pid" "$W/times"
	case $tool in
	cprof)
		(
			"$CPROF_DUMP" -d 86400 -F "$f" -o "$W/c.pb.gz" 2>"$W/c.err" &
			echo $! >"$W/pid"
			rc=0
			wait $! || rc=$?
			((rc == 0)) || echo "cprof-dump: exit $rc" >>"$W/c.err"
			times >"$W/times"
		) &
		sh=$!
		pid_of "$W/pid" || fail "cprof-dump did not start"
		profiling_on || fail "cprof-dump's profile did not start: $(tail -n 3 "$W/c.err")"
		quiet "$PROF"
		ms=$(timed_job)
		ctl stop=1
		;;
	perf)
		(
			"$PERF" record -q -a -g -e cpu-clock -F "$f" -o "$W/p.data" \
				>"$W/p.log" 2>&1 &
			echo $! >"$W/pid"
			# SIGINT ends it with 130 (128 + SIGINT)
			rc=0
			wait $! || rc=$?
			((rc == 0 || rc == 130)) || echo "perf: exit $rc" >>"$W/p.log"
			times >"$W/times"
		) &
		sh=$!
		pid_of "$W/pid" || fail "perf record did not start"
		# its events open (one per CPU), then its start-up work done
		n=$(nproc)
		for ((i = 0; i < 600; i++)); do
			(($(find "/proc/$PROF/fd" -lname 'anon_inode:*perf_event*' 2>/dev/null | wc -l) >= n)) && break
			kill -0 "$PROF" 2>/dev/null || fail "perf record exited: $(tail -n 3 "$W/p.log")"
			nap 0.1
		done
		((i < 600)) || fail "perf record opened no events in 60 s"
		quiet "$PROF"
		ms=$(timed_job)
		kill -INT "$PROF"
		;;
	esac
	wait "$sh"
	PROF=
	[[ -s $W/times ]] || fail "$tool: no CPU time"
	if [[ $tool == cprof ]] && { [[ ! -s $W/c.pb.gz ]] || grep -q '^cprof-dump: exit' "$W/c.err"; }; then
		fail "cprof-dump failed: $(tail -n 3 "$W/c.err")"
	elif [[ $tool == perf ]] && { [[ ! -s $W/p.data ]] || grep -q '^perf: exit' "$W/p.log"; }; then
		fail "perf record failed: $(tail -n 3 "$W/p.log")"
	fi
	echo "$ms $(cpu_ms "$W/times")"
	rm -f "$W/c.pb.gz" "$W/p.data"
}

# pct RATIO: as a signed percentage
pct() { awk -v r="$1" 'BEGIN { printf "%+.1f %%", 100 * (r - 1) }'; }

# the job once, unmeasured: the first run of a program pays for
# translating it
timed_job >/dev/null
echo "kernel $KVER" >"$R"
echo "rounds $ROUNDS" >>"$R"
: >"$OUT/rounds"
for f in 99 999; do
	for tool in cprof perf; do
		: >"$W/abba"
		: >"$W/cpu"
		: >"$W/job"
		for ((r = 1; r <= ROUNDS; r++)); do
			a1=$(timed_job)
			# (in this shell, so that a fail in it ends the test)
			profiled "$tool" "$f" >"$W/run"
			read -r b1 c1 <"$W/run"
			profiled "$tool" "$f" >"$W/run"
			read -r b2 c2 <"$W/run"
			a2=$(timed_job)
			echo "$a1 $b1 $b2 $a2" >>"$W/abba"
			echo "$tool $f $r $a1 $b1 $b2 $a2 $c1 $c2" >>"$OUT/rounds"
			echo "   $tool f=$f round $r: bare $a1, $tool $b1 $b2, bare $a2 ms; $tool's CPU $c1 $c2 ms"
			printf '%s\n' "$c1" "$c2" >>"$W/cpu"
			printf '%s\n' "$b1" "$b2" >>"$W/job"
		done
		awk -f "$REPO/tests/bench/abba.awk" "$W/abba" >"$W/abba.out" ||
			fail "abba.awk failed on $W/abba"
		while read -r k v; do
			[[ $k == rounds ]] || echo "${tool}_${f}_$k $v" >>"$R"
		done <"$W/abba.out"
		cpu=$(median <"$W/cpu") job=$(median <"$W/job")
		echo "${tool}_${f}_cpu_ms $cpu" >>"$R"
		echo "${tool}_${f}_job_ms $job" >>"$R"
		read -r med lo hi < <(awk '$1 == "median" { m = $2 } $1 == "lo" { l = $2 } $1 == "hi" { h = $2 }
			END { print m, l, h }' "$W/abba.out")
		echo "$tool at $f Hz: the job $(pct "$med") (95 % interval $(pct "$lo") to $(pct "$hi"), $ROUNDS ABBA rounds); $tool's own CPU $cpu ms a run (median), the job under it $job ms"
	done
done
