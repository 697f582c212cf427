#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# b_python (make bench): what reading a CPython thread's Python frames
# costs the tick, and the stream.  Debian's python3.11 runs pywork.py
# --no-zlib (its main thread: work_a/b/c and recurse, stacks 4 to 12
# Python frames deep; a sampler thread, asleep most of the time); cprof
# profiles that pid at 999 Hz for 4 s, five interleaved rounds of:
#   nopy  the module reloaded, the interpreter's table loaded with
#         --no-python-frames (no layout: no Python walk)
#   py    the module reloaded, the table loaded with its layout
# Per run: cprof_tick under function_graph (median and p90 of all rounds'
# calls, us), the module's own mean handler time a tick (stats'
# handler_ns_total over ticks, untraced ticks too), the samples, the stream's bytes per sample, the Python
# frames per sample and the code records (python_* in stats).
#
# Results: $OUT/results (key value lines) and a table in the log.  Nothing
# here fails on a figure, only on a tool that does not work.
# vm-timeout: 1200
set -euo pipefail
# shellcheck source=../lib/kprof.sh
. "$REPO/tests/vm/lib/kprof.sh"
# shellcheck source=../lib/handler.sh
. "$REPO/tests/vm/lib/handler.sh"

PY=/usr/bin/python3.11
[[ -x $PY ]] || skip "no $PY"
[[ -x $CPROF_DUMP ]] || skip "no cprof-dump ($CPROF_DUMP)"
F=${BENCH_PYTHON_FREQ:-999}
D=4
R=$OUT/results
W=$(mktemp -d)
res() { echo "$1 $2" >>"$R"; }
py=
cleanup() {
	set +e
	handler_cleanup
	[[ -n $py ]] && kill "$py"
	wait
}
trap cleanup EXIT
handler_setup "$W"
res kernel "$KVER"
res freq "$F"

"$PY" "$REPO/tests/workloads/pywork.py" 86400 --no-zlib >"$W/pywork.out" 2>&1 &
py=$!
wait_started "$W/pywork.out" 'pywork started'

declare -A MED P90
declare -A NS=([nopy]=0 [py]=0) BPS=([nopy]=0 [py]=0) FPS=([nopy]=0 [py]=0) CODES=([nopy]=0 [py]=0)
declare -A HNS=([nopy]=0 [py]=0) TICKS=([nopy]=0 [py]=0)
# run NAME [LOADER_OPTION]: the module afresh, the tables, one traced profile
run() {
	local n=$1 s0 w0 f0 c0 h0 t0
	shift
	rmmod cprof 2>/dev/null || true
	kload budget=50
	"$CPROF_DUMP" --load-unwind-tables -p "$py" "$@" 2>"$W/load.err" ||
		fail "loading tables failed: $(cat "$W/load.err")"
	ctl freq="$F" seconds="$D" pid="$py"
	s0=$(stat_of samples)
	w0=$(stat_of python_walks)
	f0=$(stat_of python_frames)
	c0=$(stat_of python_codes)
	h0=$(stat_of handler_ns_total)
	t0=$(stat_of ticks)
	trace_on cprof_tick
	cat /proc/cprof/profile >"$W/$n.raw" || fail "reading the profile failed"
	read -r "MED[$n]" "P90[$n]" < <(trace_off "$n")
	NS[$n]=$((NS[$n] + $(stat_of samples) - s0))
	BPS[$n]=$((BPS[$n] + $(stat -c %s "$W/$n.raw")))
	FPS[$n]=$((FPS[$n] + $(stat_of python_frames) - f0))
	CODES[$n]=$((CODES[$n] + $(stat_of python_codes) - c0))
	HNS[$n]=$((HNS[$n] + $(stat_of handler_ns_total) - h0))
	TICKS[$n]=$((TICKS[$n] + $(stat_of ticks) - t0))
	echo "$n: $(($(stat_of samples) - s0)) samples, $(($(stat_of python_walks) - w0)) Python walks"
}

for _ in 1 2 3 4 5; do
	run nopy --no-python-frames
	run py
done
grep -qi 'CPython' "$W/load.err" || fail "the loader found no CPython interpreter: $(cat "$W/load.err")"
((FPS[py] > 0)) || fail "no Python frames with the layout loaded"
((FPS[nopy] == 0)) || fail "Python frames without the layout"

printf '%-5s %10s %10s %12s %8s %12s %14s %8s\n' run "median us" "p90 us" "mean ns/tick" samples bytes/sample "py frames/smp" codes
for n in nopy py; do
	bps=$((BPS[$n] / (NS[$n] ? NS[$n] : 1)))
	fps=$(awk -v f="${FPS[$n]}" -v s="${NS[$n]}" 'BEGIN { printf "%.1f", s ? f / s : 0 }')
	mean=$((HNS[$n] / (TICKS[$n] ? TICKS[$n] : 1)))
	printf '%-5s %10s %10s %12s %8s %12s %14s %8s\n' "$n" "${MED[$n]}" "${P90[$n]}" "$mean" "${NS[$n]}" "$bps" "$fps" "${CODES[$n]}"
	res "$n.mean_handler_ns" "$mean"
	res "$n.median_us" "${MED[$n]}"
	res "$n.p90_us" "${P90[$n]}"
	res "$n.samples" "${NS[$n]}"
	res "$n.bytes_per_sample" "$bps"
	res "$n.python_frames_per_sample" "$fps"
	res "$n.python_codes" "${CODES[$n]}"
done
ratio=$(awk -v a="${MED[py]}" -v b="${MED[nopy]}" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')
mratio=$(awk -v a="${HNS[py]}" -v b="${HNS[nopy]}" -v ta="${TICKS[py]}" -v tb="${TICKS[nopy]}" 'BEGIN { printf "%.2f", (b > 0 && ta > 0 ? (a / ta) / (b / tb) : 0) }')
echo "handler: py/nopy $ratio (function_graph median), $mratio (the module's own mean, stats)"
res py_over_nopy "$ratio"
res py_over_nopy_mean "$mratio"
