#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# b_start: how soon a profile starts and an answer comes, as a user runs
# them, with a busy program (python3, no frame pointers) already running:
#   - cprof-dump -d 1: the time from its start to the module's first tick
#     (stats' ticks moving), 5 runs with an empty table cache (cold) and 5
#     with the cache the runs before left (warm), each on a freshly loaded
#     module (no table in it);
#   - cprof-dump --http: the time a client waits for
#     /debug/pprof/profile?seconds=2, the first request after the server
#     started, then 5 more (the loader has done the server's scan by then
#     or goes on with it);
#   - opening and closing /proc/cprof/profile, 3 times for each kind
#     (startstop_ms): the kinds that register tracepoints (off-CPU,
#     mutex, trace, threadcreate) patch kernel text at each, cpu none.
# Medians and every run are printed; nothing is asserted but that each
# profile has samples (make bench: times under TCG move with the host).
# The medians also go to $OUT/results, key value lines (summary.sh).
# vm-timeout: 600
set -euo pipefail
# shellcheck source=../lib/kprof.sh
. "$REPO/tests/vm/lib/kprof.sh"

[[ -x $CPROF_DUMP ]] || skip "no cprof-dump ($CPROF_DUMP)"
W=$(mktemp -d)
busy=
server=
cleanup() {
	kill $busy $server 2>/dev/null || true
	rm -rf "$W"
}
trap cleanup EXIT
/usr/bin/python3 -c 'while True: pass' &
busy=$!

# run KIND CACHE: one -d 1 on a fresh module; its first tick's ms printed
run() {
	local tick
	rmmod cprof 2>/dev/null || true
	kload
	first_tick "$W/tick" &
	tick=$!
	"$CPROF_DUMP" -d 1 --table-cache "$2" -f folded -o "$W/$1.folded" \
		2>"$W/$1.err" || fail "cprof-dump -d 1 ($1) failed: $(cat "$W/$1.err")"
	wait "$tick"
	grep -q . "$W/$1.folded" || fail "cprof-dump -d 1 ($1): no samples"
	cat "$W/tick"
}

declare -a cold=() warm=()
mkdir -m 700 "$W/warm"
for ((i = 0; i < 5; i++)); do
	rm -rf "$W/cold"
	mkdir -m 700 "$W/cold"
	cold+=("$(run cold "$W/cold")")
	warm+=("$(run warm "$W/warm")")
done
echo "first tick after cprof-dump -d started, cold cache: median $(median "${cold[@]}") ms of ${cold[*]}"
echo "first tick after cprof-dump -d started, warm cache: median $(median "${warm[@]}") ms of ${warm[*]}"
{
	echo "kernel $(uname -r)"
	echo "first_tick_cold_ms $(median "${cold[@]}")"
	echo "first_tick_warm_ms $(median "${warm[@]}")"
} >"$OUT/results"

# --http: the wait for seconds=2 answers
rmmod cprof 2>/dev/null || true
kload
sock=$W/pprof.sock
"$CPROF_DUMP" --http "unix:$sock" --table-cache "$W/warm" 2>"$OUT/http.err" &
server=$!
for ((i = 0; i < 100 * ${CPROF_SLOW:-1}; i++)); do
	[[ -S $sock ]] && break
	sleep 0.1
done
[[ -S $sock ]] || fail "the server did not start: $(cat "$OUT/http.err")"
declare -a waits=()
for ((i = 0; i < 6; i++)); do
	t0=${EPOCHREALTIME/./}
	code=$(curl -s --unix-socket "$sock" -o "$W/p.pb.gz" -w '%{http_code}' \
		'http://localhost/debug/pprof/profile?seconds=2')
	t1=${EPOCHREALTIME/./}
	[[ $code == 200 && -s $W/p.pb.gz ]] || fail "request $i: $code: $(tail -n 3 "$OUT/http.err")"
	waits+=("$(awk -v us=$((t1 - t0)) 'BEGIN { printf "%.2f", us / 1e6 }')")
done
echo "seconds=2 answered after: the first request after the server started ${waits[0]} s; the next 5: median $(median "${waits[@]:1}") s of ${waits[*]:1}"
{
	echo "http_first_s ${waits[0]}"
	echo "http_next_median_s $(median "${waits[@]:1}")"
} >>"$OUT/results"
echo "the server's log of them:"
grep 'GET /debug/pprof/profile' "$OUT/http.err" || true
kill "$server"
wait "$server" || true
startstop_ms cpu offcpu mutex trace threadcreate
echo "b_start: ok"
