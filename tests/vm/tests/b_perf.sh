#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# b_perf: cprof against perf, cost for cost (make bench; docs/BENCHMARKS.md).
#
# Both profilers sample every CPU with a per-CPU hrtimer at the same
# frequency and take kernel and user call chains: perf record -a -e
# cpu-clock -F f -g, and cprof (idle=1, as perf samples idle CPUs too;
# budget=50, the highest, and perf_cpu_time_max_percent=0, so that neither
# throttles itself below the asked rate unless cprof's ticks would cost
# more than half a CPU).  The job is a fixed amount of work on both
# CPUs: two copies of tests/bench/spin (main->a->b->leafN, plus 64 KiB of
# read() from /dev/zero a round, so about a quarter of the samples are in
# the kernel under a user stack).
#
# For f = 99, 999 and the highest rate the VM sustains (9999, else 4999,
# else 1999: the first at which cprof delivers 80% of the asked ticks in a
# 3 s profile and its reader still ends within 4.5 s of wall time):
#   - perf record -a runs around each measured command (perf starts the
#     command only once its events are set up, so its seconds of start-up
#     under TCG are never in what the command measures);
#   - wall time of the job, bare, under perf, under cprof (with a reader
#     draining the stream to a file, as perf record does), REPS rounds
#     interleaved, rotating the order; medians;
#   - the duration of each profiler's hrtimer callback, perf_swevent_hrtimer
#     and cprof_tick, under ftrace's function_graph tracer filtered to just
#     that function, while the job runs, HREPS rounds interleaved with the
#     order rotated: median, p90, cprof/perf; and the
#     same for nulltick_fn (tests/bench/nulltick), a callback at the same
#     rate that only re-arms: the floor that the tracer and the emulator
#     put under any callback, so that what each profiler adds to it can be
#     compared too.
# Then at the highest rate: cprof's drops (stats lost) with a live reader,
# raw (a file) and cprof-dump -d; one capture by both profilers of the same
# job at once, then perf report --stdio against cprof-dump (symbolized
# pprof) on it, and the pprof's bytes against perf.data's.
#
# With B_PERF_TICKS="F..." (b_tick), only the callbacks' cost at those
# rates.
# Results: $OUT/results (key value lines, read by tests/bench/report.sh)
# and a table in the log.  Nothing here fails on a figure: only on a
# profiler or tool that does not work.
# vm-timeout: 3000
set -euo pipefail
# REPO is the harness's (not a misspelt REPS)
# shellcheck disable=SC2153 source=../lib/kprof.sh
. "$REPO/tests/vm/lib/kprof.sh"
# shellcheck source=../lib/perfcmp.sh
. "$REPO/tests/vm/lib/perfcmp.sh"

ROUNDS=2000	# spin rounds per copy: about 3 s bare under TCG on a quiet host
CAP_SAMPLES=100000	# the capture: the job runs until cprof has this many
READ_KB=64
REPS=2
HREPS=2		# traced rounds per profiler and frequency
T=/sys/kernel/tracing
R=$OUT/results
t0=$(now_ms)
phase() {
	echo "-- $(($(now_ms) - t0)) ms: $*"
}
res() { # KEY VALUE
	echo "$1 $2" >>"$R"
}

[[ -x $CPROF_DUMP ]] || skip "no cprof-dump ($CPROF_DUMP)"
perf_find
res kernel "$KVER"
res perf "$("$PERF" --version | awk '{ print $3 }')"

# Captures go to the guest's tmpfs: perf record -a writing to the 9p
# results folder under TCG falls behind its own samples of itself.
W=$(mktemp -d)
READER=
cleanup() {
	set +e
	[[ -w $T/tracing_on ]] && {
		echo 0 >"$T/tracing_on"
		echo nop >"$T/current_tracer"
		echo >"$T/set_ftrace_filter"
	}
	[[ -n $READER ]] && echo stop=1 >/proc/cprof/ctl
	wait
	perf_restore
}
trap cleanup EXIT
perf_unthrottle

# ftrace: the harness mounts tracefs; mount it if this guest did not.
[[ -e $T/trace ]] || mount -t tracefs tracefs "$T" || fail "no tracefs at $T"
grep -q function_graph "$T/available_tracers" || fail "no function_graph tracer"
grep -qx perf_swevent_hrtimer "$T/available_filter_functions" ||
	fail "perf_swevent_hrtimer is not traceable"
kload budget=50
grep -qx 'cprof_tick \[cprof\]' "$T/available_filter_functions" ||
	fail "cprof_tick is not in available_filter_functions"
echo 16384 >"$T/buffer_size_kb"

# The job: built by make bench (build/bench/spin), else here.
SPIN=$REPO/build/bench/spin
if [[ ! -x $SPIN ]]; then
	SPIN=$OUT/spin
	gcc -O2 -g -fno-omit-frame-pointer -o "$SPIN" "$REPO/tests/bench/spin.c" ||
		fail "cannot build tests/bench/spin.c"
fi
# make bench builds the floor module for each kernel it has headers for.
NULLTICK=$REPO/build/bench/$KVER/nulltick/nulltick.ko
[[ -r $NULLTICK ]] || echo "no $NULLTICK: no floor measured (make bench builds it)"
job() { # [ROUNDS]
	local p n=${1:-$ROUNDS}
	"$SPIN" "$n" "$READ_KB" >/dev/null &
	p=$!
	"$SPIN" "$n" "$READ_KB" >/dev/null
	wait "$p"
}
# timed_job OUT [ROUNDS]: the job, its wall time (ms) written to OUT.
timed_job() {
	local s
	s=$(now_ms)
	job "${2:-}"
	echo $(($(now_ms) - s)) >"$1"
}

# traced_job FUNC ROUNDS: the job, with FUNC's calls traced by
# function_graph (trace_collect reads them).
traced_job() {
	echo 0 >"$T/tracing_on"
	echo "$1" >"$T/set_ftrace_filter"
	echo function_graph >"$T/current_tracer"
	echo >"$T/trace"
	echo 1 >"$T/tracing_on"
	job "$2"
	echo 0 >"$T/tracing_on"
}

# under_perf F DATA [OPTION...] -- FUNC [ARG...]: FUNC (one of the above)
# as the command of perf record -a -e cpu-clock -F F -g.  perf runs it once
# its events are set up and stops when it ends; PERF_STARTUP_MS is the time
# from perf's start to the command's.  (No control FIFO: perf record 6.1
# driven through one under TCG stopped answering it after a few commands.)
# cap_job: the job's two spins, run until cprof has CAP_SAMPLES more
# samples (both profilers sample at the same rate: about as many for perf),
# whatever the rate and however fast the VM runs today.
cap_job() {
	local a b i want
	want=$(($(stat_of samples) + CAP_SAMPLES))
	"$SPIN" 1000000 "$READ_KB" >/dev/null &
	a=$!
	"$SPIN" 1000000 "$READ_KB" >/dev/null &
	b=$!
	# (at most 10 minutes: a cprof that stops sampling ends it too)
	for ((i = 0; i < 1200 && $(stat_of samples) < want; i++)); do
		sleep 0.5
	done
	kill "$a" "$b"
	wait "$a" "$b" 2>/dev/null || true
}
export SPIN READ_KB ROUNDS T W CAP_SAMPLES
export -f job timed_job traced_job cap_job now_ms with_reader wait_profiling stat_of
under_perf() {
	local f=$1 data=$2 s
	local -a opts=()
	shift 2
	while [[ $1 != -- ]]; do
		opts+=("$1")
		shift
	done
	shift
	rm -f "$W/started"
	s=$(now_ms)
	# the inner shell expands $W and "$@" (W is exported)
	# shellcheck disable=SC2016
	"$PERF" record -q -a -e cpu-clock -F "$f" -g "${opts[@]}" -o "$data" \
		-- bash -c 'now_ms >"$W/started" && "$@"' bash "$@" >"$data.log" 2>&1 ||
		fail "perf record failed: $(tail -n 3 "$data.log")"
	[[ -s $data ]] || fail "perf record wrote no $data: $(tail -n 3 "$data.log")"
	PERF_STARTUP_MS=$(($(<"$W/started") - s))
}

# cprof's reader (reader_start, reader_stop in lib/kprof.sh) copies the
# stream to a file, as perf record copies its ring buffers to perf.data.

# cprof stats deltas around a profile: "ticks samples lost throttles handler_ns_total"
cstats() {
	awk '$1 == "ticks" { t = $2 } $1 == "samples" { s = $2 } $1 == "lost" { l = $2 }
	     $1 == "throttles" { th = $2 } $1 == "handler_ns_total" { h = $2 }
	     END { print t, s, l, th, h }' /proc/cprof/stats
}
cdelta() { # BEFORE AFTER -> "ticks samples lost throttles handler_ns"
	local -a a b
	read -r -a a <<<"$1"
	read -r -a b <<<"$2"
	echo $((b[0] - a[0])) $((b[1] - a[1])) $((b[2] - a[2])) $((b[3] - a[3])) $((b[4] - a[4]))
}

pct() { # P numbers on stdin -> the P-th percentile (nearest rank)
	sort -n | awk -v p="$1" '{ v[NR] = $1 } END {
		if (!NR) { print "nan"; exit }
		i = int(NR * p / 100 + 0.999999); if (i < 1) i = 1; print v[i] }'
}

# timed_run KIND F REP: one job, bare / under perf / under cprof; wall ms.
timed_run() {
	local kind=$1 f=$2 rep=$3 ms before d=
	case $kind in
	bare) timed_job "$W/ms" ;;
	perf)
		under_perf "$f" "$W/run.data" -B -- timed_job "$W/ms"
		[[ $rep == 1 ]] && res "perf_startup_ms_$f" "$PERF_STARTUP_MS"
		rm -f "$W/run.data"
		;;
	cprof)
		before=$(cstats)
		reader_start "$W/cprof-$f-$rep.raw" 300
		timed_job "$W/ms"
		reader_stop
		d=$(cdelta "$before" "$(cstats)")
		echo "$f $rep $d" >>"$OUT/cprof-runs"
		rm -f "$W/cprof-$f-$rep.raw"
		;;
	esac
	ms=$(<"$W/ms")
	echo "$kind $f $rep $ms" >>"$OUT/runs"
	echo "   $kind f=$f rep $rep: $ms ms${d:+ (cprof ticks samples lost throttles handler_ns: $d)}"
}

# trace_collect FUNC OUT: the durations (us) of FUNC's traced calls,
# appended to OUT.
trace_collect() {
	phase "traced $1: $(wc -l <"$T/trace") lines"
	awk '/\|/ { for (i = 2; i <= NF; i++) if ($i == "us") { print $(i - 1); break } }' \
		"$T/trace" >>"$2"
	cat "$T"/per_cpu/cpu*/stats | awk '$1 == "overrun:" { o += $2 } END { if (o) print "   trace overrun " o }'
	echo nop >"$T/current_tracer"
	echo >"$T/set_ftrace_filter"
}

# traced_run KIND F ROUNDS: one traced job, appending the callback
# durations to $OUT/h-KIND-F: perf's (under perf record), cprof's (with a
# reader), or the floor's (nulltick_fn; nothing if it was not built).
traced_run() {
	local kind=$1 f=$2 n=$3
	case $kind in
	perf)
		phase "f=$f: tracing perf_swevent_hrtimer"
		under_perf "$f" "$W/run.data" -B -- traced_job perf_swevent_hrtimer "$n"
		rm -f "$W/run.data"
		trace_collect perf_swevent_hrtimer "$OUT/h-perf-$f"
		;;
	cprof)
		reader_start "$W/trace-$f.raw" 300
		traced_job cprof_tick "$n"
		reader_stop
		rm -f "$W/trace-$f.raw"
		trace_collect cprof_tick "$OUT/h-cprof-$f"
		;;
	null)
		[[ -r $NULLTICK ]] || return 0
		insmod "$NULLTICK" "freq=$f" || fail "insmod $NULLTICK failed"
		traced_job nulltick_fn "$n"
		rmmod nulltick
		trace_collect nulltick_fn "$OUT/h-null-$f"
		;;
	esac
}

# handler_cost F ROUNDS: each profiler's callback and the floor's traced
# at F Hz (a shorter job at high rates: thousands of calls anyway), ROUNDS
# rounds, the order rotated; their medians and p90s into the results.
handler_cost() {
	local f=$1 rounds=$2 tr rep kind p nperf ncprof
	local -a horders=("perf cprof null" "null cprof perf" "cprof null perf")
	tr=$((f > 999 ? ROUNDS / 4 : ROUNDS))
	rm -f "$OUT/h-perf-$f" "$OUT/h-cprof-$f" "$OUT/h-null-$f"
	for ((rep = 1; rep <= rounds; rep++)); do
		for kind in ${horders[(rep - 1) % 3]}; do
			traced_run "$kind" "$f" "$tr"
		done
	done
	if [[ -s $OUT/h-null-$f ]]; then
		res "h_null_n_$f" "$(wc -l <"$OUT/h-null-$f")"
		res "h_null_med_$f" "$(median <"$OUT/h-null-$f")"
		res "h_null_p90_$f" "$(pct 90 <"$OUT/h-null-$f")"
	fi
	nperf=$(wc -l <"$OUT/h-perf-$f")
	ncprof=$(wc -l <"$OUT/h-cprof-$f")
	((nperf >= 100 && ncprof >= 100)) ||
		fail "f=$f: too few traced handler calls (perf $nperf, cprof $ncprof)"
	for p in perf cprof; do
		res "h_${p}_n_$f" "$(wc -l <"$OUT/h-$p-$f")"
		res "h_${p}_med_$f" "$(median <"$OUT/h-$p-$f")"
		res "h_${p}_p90_$f" "$(pct 90 <"$OUT/h-$p-$f")"
	done
}

# The job once, untimed: the first run of a program from the host's file
# system under TCG pays for reading and translating it.
job

ctl idle=1 depth=127 seconds=86400
# B_PERF_TICKS="F...": the callbacks' cost at those rates, nothing else
# (the summary's tick row, in minutes rather than the whole run's hour
# under -icount).
if [[ -n ${B_PERF_TICKS:-} ]]; then
	for f in $B_PERF_TICKS; do
		ctl "freq=$f"
		handler_cost "$f" "$HREPS"
		phase "f=$f done: $(grep -E "_$f\$|_${f} " "$R" | tr '\n' ' ')"
	done
	echo "b_perf: ok (the callbacks only, at $B_PERF_TICKS Hz)"
	exit 0
fi

# ------------------------------------------------------------ highest rate
high=
for f in 9999 4999 1999; do
	# 3 s of profile while the job runs (a profile, not the job: at a rate
	# the VM cannot take the job would crawl)
	ctl "freq=$f" seconds=3
	before=$(cstats)
	"$SPIN" 100000 "$READ_KB" >/dev/null &
	j1=$!
	"$SPIN" 100000 "$READ_KB" >/dev/null &
	j2=$!
	s=$(now_ms)
	cat /proc/cprof/profile >"$W/cal.raw"
	ms=$(($(now_ms) - s))
	kill "$j1" "$j2"
	wait "$j1" "$j2" 2>/dev/null || true
	read -r ticks samples lost thr _ < <(cdelta "$before" "$(cstats)")
	want=$((f * 2 * 3))
	echo "calibration f=$f: $ticks ticks in 3 s on 2 CPUs (asked $want; reader took $ms ms), lost $lost, throttles $thr"
	res "cal_${f}_ticks_pct" $((ticks * 100 / want))
	# sustained: 80% of the ticks, and the VM still runs the reader on time
	if ((ticks * 10 >= want * 8 && ms <= 4500)); then
		high=$f
		break
	fi
done
ctl seconds=86400
rm -f "$W/cal.raw"
high=${high:-1999}
res high "$high"
phase "highest rate: $high Hz"

# ------------------------------------------------------------ per frequency
for f in 99 999 "$high"; do
	ctl "freq=$f"
	orders=("bare perf cprof" "perf cprof bare" "cprof bare perf")
	for ((rep = 1; rep <= REPS; rep++)); do
		for kind in ${orders[(rep - 1) % 3]}; do
			timed_run "$kind" "$f" "$rep"
		done
	done
	# (one round at the highest rate: there, tracing every callback with
	# both profilers' throttles off keeps the CPUs in interrupts, and a
	# second round in a row stalled a 6.1 guest)
	handler_cost "$f" "$([[ $f == "$high" ]] && echo 1 || echo "$HREPS")"
	for kind in bare perf cprof; do
		res "wall_${kind}_$f" "$(awk -v k="$kind" -v f="$f" '$1 == k && $2 == f { print $4 }' "$OUT/runs" | median)"
	done
	# cprof's own accounting of its handler, untraced (timed runs)
	read -r ct _ cl cth ch < <(awk -v f="$f" '$1 == f { t += $3; s += $4; l += $5; th += $6; h += $7 }
		END { print t + 0, s + 0, l + 0, th + 0, h + 0 }' "$OUT/cprof-runs")
	res "cprof_ticks_$f" "$ct"
	res "cprof_lost_$f" "$cl"
	res "cprof_throttles_$f" "$cth"
	res "cprof_own_mean_ns_$f" $((ch / (ct ? ct : 1)))
	phase "f=$f done: $(grep -E "_$f\$|_${f} " "$R" | tr '\n' ' ')"
done

# ------------------------------------------------------------ drops
ctl "freq=$high"
for reader in raw dump; do
	before=$(cstats)
	s=$(now_ms)
	if [[ $reader == raw ]]; then
		reader_start "$W/drops.raw" 300
		job
		reader_stop
		rm -f "$W/drops.raw"
	else
		ctl seconds=10
		job &
		jp=$!
		"$CPROF_DUMP" -d 10 -o "$W/drops.pb.gz" 2>"$OUT/drops.err" || fail "cprof-dump -d failed: $(cat "$OUT/drops.err")"
		wait "$jp"
		ctl seconds=86400
	fi
	read -r ticks samples lost thr _ < <(cdelta "$before" "$(cstats)")
	echo "drops at $high Hz, reader $reader: $samples samples, $lost lost, $thr throttles, $ticks ticks in $(($(now_ms) - s)) ms"
	res "drops_${reader}_samples" "$samples"
	res "drops_${reader}_lost" "$lost"
	res "drops_${reader}_throttles" "$thr"
done
phase "drops done"

# ------------------------------------------------------------ one capture
# Both profilers on the same job at once: about the same number of samples,
# about 10^5 each.
under_perf "$high" "$W/cap.data" -- with_reader "$W/cap.raw" cap_job
res perf_startup_ms_cap "$PERF_STARTUP_MS"
phase "captured"
cap_perf_n=$("$PERF" script -i "$W/cap.data" -F cpu 2>/dev/null | wc -l)
cap_cprof_n=$("$WORKLOADS/streamtext" <"$W/cap.raw" | grep -c '^S ' || true)
res cap_perf_samples "$cap_perf_n"
res cap_cprof_samples "$cap_cprof_n"
res cap_perf_bytes "$(stat -c %s "$W/cap.data")"
res cap_raw_bytes "$(stat -c %s "$W/cap.raw")"
for i in 1 2 3; do
	s=$(now_ms)
	"$PERF" report -i "$W/cap.data" --stdio >"$W/cap.report" 2>"$OUT/cap.report.err" ||
		fail "perf report failed: $(tail -n 3 "$OUT/cap.report.err")"
	echo $(($(now_ms) - s)) >>"$OUT/t-report"
	s=$(now_ms)
	"$CPROF_DUMP" -i "$W/cap.raw" -o "$W/cap.pb.gz" 2>"$OUT/cap.dump.err" ||
		fail "cprof-dump failed: $(cat "$OUT/cap.dump.err")"
	echo $(($(now_ms) - s)) >>"$OUT/t-dump"
	echo "   perf report $(tail -n 1 "$OUT/t-report") ms, cprof-dump $(tail -n 1 "$OUT/t-dump") ms"
done
res t_perf_report_ms "$(median <"$OUT/t-report")"
res t_cprof_dump_ms "$(median <"$OUT/t-dump")"
res cap_pprof_bytes "$(stat -c %s "$W/cap.pb.gz")"
res cap_report_unresolved_kernel "$(grep -c '0xffffffff' "$W/cap.report" || true)"
s=$(now_ms)
"$CPROF_DUMP" -i "$W/cap.raw" -f top -n 12 >"$OUT/cap.top" 2>/dev/null
res t_cprof_dump_top_ms $(($(now_ms) - s))
rm -f "$W/cap.report"
phase "done"

echo
echo "== b_perf on $KVER: results"
cat "$R"
"$REPO/tests/bench/report.sh" "$R" || true
