#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# b_modules: the tick's cost of several builds of the module, in one boot,
# so that a change is measured against its neighbours and not against
# another boot (under TCG one boot runs a third faster or slower than the
# next; builds compared in turn in one boot differ by a few percent,
# repeatably).  make bench builds each commit of BENCH_MODULES into
# build/bench/KVER/modules/COMMIT/ (empty: this test skips).
#
# For each workload make bench names in that folder's workloads
# (BENCH_WORKLOADS, default "cpuburn fpburn"), burning both CPUs:
#   cpuburn  main -> a -> b -> leaves, frame-pointer code above libc's
#            entry: with tables the walk also steps libc's frames below
#            main(), which the frame-pointer walk cannot;
#   fpburn   the same graph on threads started by clone(): only
#            frame-pointer code, both walks end at clone's thread start
#            with the same frames (the cost of tables being loaded for
#            frame-pointer code alone);
# five rounds (BENCH_ROUNDS: make bench writes them to that folder's
# rounds), the builds' order rotated each round, each build loaded afresh:
#   fp   a profile of 3 s at 999 Hz without unwind tables;
#   tab  the same after cprof-dump --load-unwind-tables (builds that have
#        /proc/cprof/unwind);
# each run's median and 25th percentile of cprof_tick under
# function_graph; then for each of the two, per build and run, the mean of
# its rounds' and their range, the rounds in which it was the lowest of
# all builds, and tab/fp per round.
# vm-timeout: 1800
# shellcheck source=../lib/kprof.sh
set -euo pipefail
. "$REPO/tests/vm/lib/kprof.sh"
. "$REPO/tests/vm/lib/handler.sh"

DIR=$REPO/build/bench/$KVER/modules
V=()
for d in "$DIR"/*/kmod/cprof.ko; do
	[[ -e $d ]] || continue
	d=${d%/kmod/cprof.ko}
	V+=("${d##*/}")
done
((${#V[@]})) || skip "no builds in $DIR (make bench BENCH_MODULES='COMMIT...')"
[[ -x $CPROF_DUMP ]] || skip "no cprof-dump ($CPROF_DUMP)"
ROUNDS=$(cat "$DIR/rounds" 2>/dev/null || echo 5)
[[ $ROUNDS =~ ^[1-9][0-9]?$ ]] || fail "rounds: $ROUNDS (BENCH_ROUNDS: 1 to 99)"
read -r -a LOADS <"$DIR/workloads" 2>/dev/null || LOADS=(cpuburn)
for l in "${LOADS[@]}"; do
	[[ $l == cpuburn || $l == fpburn ]] || fail "workload $l (BENCH_WORKLOADS: cpuburn, fpburn)"
done
F=999
D=3
BASE=$(mktemp -d)	# a folder per workload: W
JOBS=()
cleanup() {
	set +e
	handler_cleanup
	kill "${JOBS[@]}" 2>/dev/null
	wait
	rmmod cprof 2>/dev/null
}
trap cleanup EXIT

# run BUILD KIND ROUND: one traced profile; its median into $W/BUILD.KIND,
# its 25th percentile into $W/BUILD.KIND.p25; in the first round, the
# user frames of the workload's samples, on average, into
# $W/BUILD.KIND.frames (what each walk found)
run() {
	local m q
	rmmod cprof 2>/dev/null || true
	insmod "$DIR/$1/kmod/cprof.ko" budget=50 || fail "insmod of $1's module failed"
	if [[ $2 == tab ]]; then
		[[ -e /proc/cprof/unwind ]] || return 0
		"$CPROF_DUMP" --load-unwind-tables 2>"$W/load.err" ||
			fail "$1: loading tables failed: $(cat "$W/load.err")"
	fi
	ctl freq="$F" seconds="$D" idle=1
	trace_on cprof_tick
	cat /proc/cprof/profile >"$W/raw" || fail "$1: reading the profile failed"
	read -r m _ < <(trace_off "$1.$2.$3")
	if (($3 == 1)); then
		"$WORKLOADS/streamtext" <"$W/raw" | rawk -v pids=" ${JOBS[*]} " '
			$1 == "S" && index(pids, " " $S_pid " ") { n++; u += $S_nr_user }
			END { printf "%.2f\n", n ? u / n : 0 }' >"$W/$1.$2.frames" ||
			fail "$1 $2: the profile's stream is malformed"
	fi
	[[ $m != nan ]] || fail "$1 $2: no tick timed"
	q=$(sort -n "$W/$1.$2.$3.us" | awk '{ v[NR] = $1 } END { print v[int((NR + 3) / 4)] }')
	echo "$3 $m" >>"$W/$1.$2"
	echo "$3 $q" >>"$W/$1.$2.p25"
}

# burn LOAD: both CPUs busy with LOAD
burn() {
	case $1 in
	cpuburn)
		for _ in 1 2; do
			"$WORKLOADS/cpuburn" 86400 >/dev/null &
			JOBS+=($!)
		done ;;
	fpburn)
		"$WORKLOADS/fpburn" 86400 2 >/dev/null &
		JOBS+=($!) ;;
	esac
	sleep 1
}

# report STAT: per build and run, the mean of the rounds' STAT (median or
# p25: host preemption that lands in a tick lifts the median before it
# reaches the 25th percentile), then tab/fp per round: the build's two
# runs back to back, so that what slows a stretch of the boot slows both
report() {
	local sfx=$1 kind v low
	[[ $sfx == median ]] && sfx= || sfx=.$1
	echo "== $1 of cprof_tick per run (us)"
	printf '%-12s %-4s %9s %15s %7s  %s\n' build run mean_us range_us lowest "each round's"
	for kind in fp tab; do
		for v in "${V[@]}"; do
			[[ -s $W/$v.$kind$sfx ]] || continue
			# lowest: rounds in which this build's was the lowest
			low=$(cat "$W"/*."$kind$sfx" | awk -v me="$(tr '\n' ' ' <"$W/$v.$kind$sfx")" '
				{ if (!($1 in min) || $2 < min[$1]) min[$1] = $2 }
				END { n = split(me, a, " "); c = 0
				      for (i = 1; i < n; i += 2) if (a[i + 1] == min[a[i]]) c++
				      print c }')
			awk -v b="$v" -v k="$kind" -v low="$low" '
				{ s += $2; v = v " " $2; if (NR == 1 || $2 < lo) lo = $2; if (NR == 1 || $2 > hi) hi = $2 }
				END { printf "%-12s %-4s %9.2f %7.2f-%-7.2f %7s %s\n", b, k, s / NR, lo, hi, low "/" NR, v }' \
				"$W/$v.$kind$sfx"
		done
	done
	printf '%-12s %-6s %9s %15s  %s\n' build ratio mean range "each round's"
	for v in "${V[@]}"; do
		[[ -s $W/$v.fp$sfx && -s $W/$v.tab$sfx ]] || continue
		awk -v b="$v" 'NR == FNR { fp[$1] = $2; next }
			($1 in fp) && fp[$1] > 0 { x = $2 / fp[$1]; s += x; n++; v = v sprintf(" %.2f", x)
			  if (n == 1 || x < lo) lo = x; if (n == 1 || x > hi) hi = x }
			END { if (n) printf "%-12s %-6s %9.2f %7.2f-%-7.2f %s\n", b, "tab/fp", s / n, lo, hi, v }' \
			"$W/$v.fp$sfx" "$W/$v.tab$sfx"
	done
}
for load in "${LOADS[@]}"; do
	burn "$load"
	W=$BASE/$load
	mkdir -p "$W"
	handler_setup "$W"
	for ((r = 1; r <= ROUNDS; r++)); do
		for ((i = 0; i < ${#V[@]}; i++)); do
			v=${V[$(((i + r) % ${#V[@]}))]}
			run "$v" fp "$r"
			run "$v" tab "$r"
		done
	done
	kill "${JOBS[@]}" 2>/dev/null
	wait "${JOBS[@]}" 2>/dev/null || true
	JOBS=()
	echo "==== $load"
	for v in "${V[@]}"; do
		echo "$v: user frames a sample, the workload's: fp $(cat "$W/$v.fp.frames"), tab $(cat "$W/$v.tab.frames" 2>/dev/null || echo -)"
	done
	report median
	report p25
done
