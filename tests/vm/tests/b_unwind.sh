#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# b_unwind: what complete user stacks cost (make bench; docs/BENCHMARKS.md).
#
# Two copies of qsortsplit (-O2, no frame pointers; stacks about 16 frames
# deep through libc's qsort) run on both CPUs.  At F Hz, all CPUs, for D s
# each, in this order in one boot:
#   fp     cprof, no unwind tables (the frame-pointer walk: short stacks)
#   table  cprof after cprof-dump --load-unwind-tables (complete stacks)
#   dwarf  perf record --call-graph dwarf,16384 (complete stacks, unwound
#          later from a 16 KiB copy of each sample's stack)
#   perfg  perf record -g (the frame-pointer walk)
# (the cprof runs three times each, interleaved, their handler times
# pooled), and then with cpuburn (frame pointers everywhere) in place of
# qsortsplit:
#   fpold  the module as it was before unwind tables (make bench builds it
#          from BENCH_BASELINE; skipped if it is not there)
#   fpfp   cprof without tables (the walk every stack took before tables)
#   fptab  cprof with cpuburn's and libc's tables loaded
#   perffp perf record -g (the frame-pointer walk on the same code)
# Each handler (cprof_tick, perf_swevent_hrtimer) is timed by ftrace's
# function_graph tracer while it samples: median and p90 in us.  Per run
# also the samples, the capture's bytes per sample, the share of the
# workload's samples whose stack reaches main, and the time to turn the
# capture into a report: cprof-dump -f top against perf report --stdio
# (which unwinds the dwarf capture then).
#
# Then the tables' memory: the tables of libc, python3, node and
# libLLVM-14 (loaded with --load-unwind-tables for a process that maps
# each), their rows and bytes as /proc/cprof/unwind lists them, bytes a
# row, beside what the layout before c9a3853 took for the same rows (12
# bytes a row and 4 a 4 KiB page of the file, computed).
#
# Results: $OUT/results (key value lines) and a table in the log.  Nothing
# here fails on a figure, only on a tool that does not work.
# vm-timeout: 1800
set -euo pipefail
# shellcheck source=../lib/kprof.sh
. "$REPO/tests/vm/lib/kprof.sh"
# shellcheck source=../lib/perfcmp.sh
. "$REPO/tests/vm/lib/perfcmp.sh"
# shellcheck source=../lib/handler.sh
. "$REPO/tests/vm/lib/handler.sh"

F=${BENCH_UNWIND_FREQ:-999}
D=4
R=$OUT/results
W=$(mktemp -d)
res() { echo "$1 $2" >>"$R"; }

[[ -x $CPROF_DUMP ]] || skip "no cprof-dump ($CPROF_DUMP)"
perf_find
JOBS=()
cleanup() {
	set +e
	handler_cleanup
	kill "${JOBS[@]}" 2>/dev/null
	wait
	perf_restore
}
trap cleanup EXIT
perf_unthrottle
handler_setup "$W"
res kernel "$KVER"
res freq "$F"

jobs_start() { # PROGRAM
	local p
	jobs_stop
	"$1" 86400 >/dev/null &
	JOBS+=($!)
	"$1" 86400 >/dev/null &
	JOBS+=($!)
	sleep 1
	for p in "${JOBS[@]}"; do
		kill -0 "$p" 2>/dev/null || fail "$1 did not start"
	done
}
jobs_stop() {
	((${#JOBS[@]})) || return 0
	kill "${JOBS[@]}" 2>/dev/null || true
	wait "${JOBS[@]}" 2>/dev/null || true
	JOBS=()
}

# reach FOLDED: the share (%) of qsortsplit's or cpuburn's samples whose
# stack holds main.
reach() {
	awk '{ c = $NF; s = substr($0, 1, length($0) - length(c) - 1)
		if (s !~ /^(qsortsplit|cpuburn);/) next
		n += c; if (s ~ /;main;/) m += c }
		END { printf "%.1f", n ? 100 * m / n : 0 }' "$1"
}

declare -A MED P90 NS BPS REACH REPORT
# cprof_run NAME: one traced cprof profile of the running jobs.
cprof_run() {
	local n=$1 s0 s1 t0
	ctl freq="$F" seconds="$D" idle=1
	s0=$(stat_of samples)
	trace_on cprof_tick
	cat /proc/cprof/profile >"$W/$n.raw" || fail "reading the profile failed"
	read -r "MED[$n]" "P90[$n]" < <(trace_off "$n")
	s1=$(stat_of samples)
	NS[$n]=$((s1 - s0))
	BPS[$n]=$(($(stat -c %s "$W/$n.raw") / (NS[$n] ? NS[$n] : 1)))
	t0=$(now_ms)
	"$CPROF_DUMP" -i "$W/$n.raw" -f folded -o "$W/$n.folded" 2>"$W/$n.err" ||
		fail "cprof-dump failed: $(cat "$W/$n.err")"
	REPORT[$n]=$(($(now_ms) - t0))
	REACH[$n]=$(reach "$W/$n.folded")
}
# perf_run NAME CALLGRAPH...: the same with perf record -a.
perf_run() {
	local n=$1 t0
	shift
	trace_on perf_swevent_hrtimer
	"$PERF" record -q -a -e cpu-clock -F "$F" "$@" -o "$W/$n.data" -- sleep "$D" \
		>"$W/$n.log" 2>&1 || fail "perf record failed: $(tail -n 3 "$W/$n.log")"
	read -r "MED[$n]" "P90[$n]" < <(trace_off "$n")
	NS[$n]=$("$PERF" report -i "$W/$n.data" --stats 2>/dev/null |
		awk '$1 == "SAMPLE" && $2 == "events:" { print $3; exit }')
	[[ -n ${NS[$n]} ]] || NS[$n]=0
	BPS[$n]=$(($(stat -c %s "$W/$n.data") / (NS[$n] ? NS[$n] : 1)))
	t0=$(now_ms)
	"$PERF" report -i "$W/$n.data" --kallsyms /proc/kallsyms --stdio --no-children \
		>"$W/$n.report" 2>/dev/null || fail "perf report failed"
	REPORT[$n]=$(($(now_ms) - t0))
	"$PERF" script -i "$W/$n.data" -F comm,ip,sym 2>/dev/null | awk '
		function flush() { if (n && (comm == "qsortsplit" || comm == "cpuburn")) { t++; if (st ~ /;main;/) m++ } n = 0; st = ";" }
		NF == 0 { flush(); next }
		!n && !/^[ \t]/ { comm = $1; n = 1; next }
		{ st = st $2 ";" }
		END { flush(); printf "%.1f", t ? 100 * m / t : 0 }' >"$W/$n.reach"
	REACH[$n]=$(<"$W/$n.reach")
}

OLD=$REPO/build/bench/$KVER/baseline/kmod/cprof.ko
[[ -r $OLD ]] || echo "no $OLD: the module before tables is not timed (make bench builds it)"
# module VARIANT: the module a run wants, loaded afresh (tables go with it)
module() {
	rmmod cprof 2>/dev/null || true
	case $1 in
	old) insmod "$OLD" budget=50 || fail "insmod $OLD failed" ;;
	new) kload budget=50 ;;
	tables)
		kload budget=50
		"$CPROF_DUMP" --load-unwind-tables 2>"$W/load.err" ||
			fail "loading tables failed: $(cat "$W/load.err")"
		;;
	esac
}

# ROUNDS rounds, the cprof runs of each interleaved (the emulator's speed
# drifts with the host's load: a run is only compared with its neighbours).
ROUNDS=3
runs=(fp table dwarf perfg fpfp fptab perffp)
[[ -r $OLD ]] && runs+=(fpold)
echo "-- qsortsplit, $F Hz"
jobs_start "$WORKLOADS/qsortsplit"
for ((r = 1; r <= ROUNDS; r++)); do
	module new
	cprof_run fp
	module tables
	((r > 1)) || cat "$W/load.err"
	cprof_run table
done
perf_run dwarf --call-graph dwarf,16384
perf_run perfg -g
echo "-- cpuburn, $F Hz"
jobs_start "$WORKLOADS/cpuburn"
for ((r = 1; r <= ROUNDS; r++)); do
	if [[ -r $OLD ]]; then
		module old
		cprof_run fpold
	fi
	module new
	cprof_run fpfp
	module tables
	cprof_run fptab
done
perf_run perffp -g
jobs_stop

printf '%-6s %9s %9s %9s %11s %9s %10s\n' run median_us p90_us samples bytes/sample reach% report_ms
for n in "${runs[@]}"; do
	printf '%-6s %9s %9s %9s %11s %9s %10s\n' "$n" "${MED[$n]}" "${P90[$n]}" \
		"${NS[$n]}" "${BPS[$n]}" "${REACH[$n]}" "${REPORT[$n]}"
	res "$n.median_us" "${MED[$n]}"
	res "$n.p90_us" "${P90[$n]}"
	res "$n.samples" "${NS[$n]}"
	res "$n.bytes_per_sample" "${BPS[$n]}"
	res "$n.reach_pct" "${REACH[$n]}"
	res "$n.report_ms" "${REPORT[$n]}"
done
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b ? a / b : 0 }'; }

# Table memory: NAME FILE CMD...; CMD maps FILE and waits.
echo "-- table memory"
module new
printf '%-8s %9s %11s %9s %13s\n' file rows bytes bytes/row before/row
table_bytes() {
	local name=$1 file=$2 pid ino rows bytes size i real
	shift 2
	[[ -r $file ]] || { echo "$name: no $file"; return 0; }
	"$@" >/dev/null 2>&1 &
	pid=$!
	JOBS+=("$pid")
	# until it maps the file (python3 takes seconds to dlopen libLLVM
	# under TCG), for at most a minute
	real=$(readlink -f "$file")
	for ((i = 0; i < 600 * ${CPROF_SLOW:-1}; i++)); do
		grep -qF "$real" "/proc/$pid/maps" 2>/dev/null && break
		sleep 0.1
	done
	grep -qF "$real" "/proc/$pid/maps" ||
		fail "$name: $* did not map $file"
	"$CPROF_DUMP" --load-unwind-tables -p "$pid" 2>"$W/mem.err" ||
		fail "loading $name's tables failed: $(cat "$W/mem.err")"
	ino=$(stat -L -c %i "$file")
	size=$(stat -L -c %s "$file")
	read -r rows bytes < <(awk -v ino="$ino" '$2 == ino { print $5, $6; exit }' /proc/cprof/unwind) || true
	[[ -n $rows ]] || fail "$name: no table for $file in /proc/cprof/unwind: $(cat "$W/mem.err")"
	printf '%-8s %9s %11s %9s %13s\n' "$name" "$rows" "$bytes" "$(ratio "$bytes" "$rows")" \
		"$(ratio $((rows * 12 + (size / 4096 + 1) * 4)) "$rows")"
	res "$name.table_rows" "$rows"
	res "$name.table_bytes" "$bytes"
	jobs_stop
}
LIBDIR=/usr/lib/x86_64-linux-gnu
table_bytes libc "$LIBDIR/libc.so.6" sleep 600
table_bytes python3 "$(readlink -f /usr/bin/python3)" python3 -c 'import time; time.sleep(600)'
table_bytes node "$(readlink -f /usr/bin/node)" node -e 'setTimeout(() => {}, 600000)'
table_bytes libLLVM "$LIBDIR/libLLVM-14.so.1" python3 -c \
	'import ctypes, time; ctypes.CDLL("libLLVM-14.so.1"); time.sleep(600)'

echo "handler: table/dwarf $(ratio "${MED[table]}" "${MED[dwarf]}"), table/fp $(ratio "${MED[table]}" "${MED[fp]}"), fptab/fpfp $(ratio "${MED[fptab]}" "${MED[fpfp]}"), fpfp/fpold $(ratio "${MED[fpfp]}" "${MED[fpold]:-0}")"
echo "bytes per sample: table/dwarf $(ratio "${BPS[table]}" "${BPS[dwarf]}")"
echo "report time: cprof-dump/perf report (dwarf) $(ratio "${REPORT[table]}" "${REPORT[dwarf]}")"
echo "b_unwind: ok"
