#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# u_trace: the scheduler's timeline (profile kind trace) of a 2-thread
# ping-pong.  tracepong (tests/workloads/tracepong.c) stops itself;
# cprof-dump --kind trace -p of its process starts; once it records,
# tracepong passes a byte back and forth between its two threads on CPU 0
# for 0.5 s, counting its round trips and each thread's own context
# switches; then stop=1.
# tests/vm/lib/tracecheck.py reads the JSON with python3's json:
#   - every switch of each thread up to its own count is a run ending in
#     the trace, or records lost are counted;
#   - on CPU 0 the two threads' runs alternate and never overlap;
#   - wake-up flows go from each thread to the other;
#   - the stacks they left the CPU with name ping_side and pong_side.
# Then cprof-dump --http: the index page lists trace and says it is not
# Go's runtime trace; /debug/pprof/trace?seconds=1 answers gzipped JSON
# (Content-Type application/json, Content-Encoding gzip) that python3
# reads.  Prints the module's cost per stack walked (what opening and
# closing such a profile costs: b_start; speedscope opening such a trace:
# u_browser.)
# vm-kernels: 6.12 6.1-rt
# vm-timeout: 180
set -euo pipefail
# shellcheck source=../lib/kprof.sh
. "$REPO/tests/vm/lib/kprof.sh"
command -v python3 >/dev/null || { echo "u_trace: no python3: skip"; exit 77; }
[[ -x $CPROF_DUMP ]] || fail "no cprof-dump at $CPROF_DUMP"

# at most: the profile ends with stop=1 once tracepong is done
SECONDS_P=600
# 4 MiB a CPU: a reader on a loaded TCG host can fall a second behind, and
# the ping-pong fills 1 MiB in less (a ring's loss is counted, but then
# the count cannot be checked exactly)
kload buffer_kb=4096
# only tracepong's process (pid=): the whole machine's trace grew past
# 52 MB on a PREEMPT_RT guest, its reader never settling
# (stopped in main(), its libraries mapped: the reader loads their tables
# when it starts, not while the ping-pong runs)
taskset -c 0 "$WORKLOADS/tracepong" 0.5 stop >"$OUT/tracepong.out" &
pong=$!
state=
for ((i = 0; i < 100 * ${CPROF_SLOW:-1}; i++)); do
	read -r _ _ state _ <"/proc/$pong/stat" && [[ $state == T ]] && break
	sleep 0.1
done
[[ $state == T ]] || fail "tracepong did not stop itself (state $state)"
# its libraries' unwind tables in the module first: the switch-outs'
# stacks pass libc's read and write, leaves without frames (on the debug
# kernel a reader compiling libc's table in the background left it
# behind past the ping-pong)
"$CPROF_DUMP" --load-unwind-tables -p "$pong" 2>"$OUT/load.err" ||
	fail "cprof-dump --load-unwind-tables failed: $(cat "$OUT/load.err")"
"$CPROF_DUMP" --kind trace -d $SECONDS_P -p "$pong" -o "$OUT/trace.json" 2>"$OUT/cli.err" &
cli=$!
wait_profiling || fail "no profile started: $(cat "$OUT/cli.err")"
# the recorders are in place a moment after the session begins; the
# reader keeps up once it is done starting
sleep "${CPROF_SLOW:-1}"
settle "$cli"
kill -CONT "$pong"
wait "$pong" || fail "tracepong failed: $(cat "$OUT/tracepong.out")"
ctl stop=1
wait "$cli" || fail "cprof-dump --kind trace failed: $(cat "$OUT/cli.err")"
echo "cli: --kind trace, stopped once tracepong was done: $(wc -c <"$OUT/trace.json") bytes of JSON; tracepong: $(grep -h round_trips "$OUT/tracepong.out")"
python3 "$REPO/tests/vm/lib/tracecheck.py" "$OUT/trace.json" "$OUT/tracepong.out" ||
	fail "the timeline does not show tracepong as it counted itself (above)"
st=$(stat_of trace_stacks)
ev=$(($(stat_of trace_switches) + $(stat_of trace_wakes)))
echo "module: $(stat_of trace_switches) switches, $(stat_of trace_wakes) wake-ups, $st stacks recorded, $(stat_of trace_skipped) stacks over budget, $(stat_of trace_nostack_ring) with the ring half full; $(($(stat_of trace_ns_total) / (ev ? ev : 1))) ns a record on average, $(stat_of trace_ns_max) ns the longest probe"

sock=$(mktemp -d)/pprof.sock
"$CPROF_DUMP" --http "unix:$sock" 2>"$OUT/http.err" &
server=$!
for ((i = 0; i < 100 * ${CPROF_SLOW:-1}; i++)); do
	[[ -S $sock ]] && curl -sf --unix-socket "$sock" http://localhost/debug/pprof/ >"$OUT/index.html" && break
	sleep 0.1
done
grep -q "href='trace?seconds=1'>trace<" "$OUT/index.html" ||
	fail "the index page lists no trace: $(cat "$OUT/index.html" "$OUT/http.err")"
grep -q "Not Go's runtime execution trace" "$OUT/index.html" ||
	fail "the index page does not say trace is not Go's runtime trace"
code=$(curl -s --unix-socket "$sock" -D "$OUT/http.headers" -o "$OUT/http.json.gz" \
	-w '%{http_code}' 'http://localhost/debug/pprof/trace?seconds=1')
[[ $code == 200 ]] || fail "trace: HTTP $code: $(head -c 300 "$OUT/http.json.gz"; tail -n 3 "$OUT/http.err")"
if ! grep -qi '^content-type: application/json' "$OUT/http.headers" ||
	! grep -qi '^content-encoding: gzip' "$OUT/http.headers"; then
	fail "trace: not gzipped JSON: $(cat "$OUT/http.headers")"
fi
python3 -c 'import gzip, json, sys
t = json.loads(gzip.decompress(open(sys.argv[1], "rb").read()))
x = sum(1 for e in t["traceEvents"] if e["ph"] == "X")
print("http: /debug/pprof/trace?seconds=1: %d events, %d runs, %d records lost" % (len(t["traceEvents"]), x, t["otherData"]["records_lost"]))
sys.exit(0 if x else 1)' "$OUT/http.json.gz" || fail "trace over HTTP: no runs in the JSON"
kill "$server"
wait "$server" || true

echo "u_trace: ok"
