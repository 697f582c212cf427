#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# u_threadcreate: the stacks that create threads (profile kind
# threadcreate), counted exactly.  spawner (tests/workloads/spawner.c)
# creates, at each SIGUSR1, one thread from spawn_warm, then 20 from
# spawn_few and 60 from spawn_many, interleaved; each profile is started
# first and ended with stop=1 once spawner is done:
#   - cprof-dump --http: the index lists threadcreate;
#     /debug/pprof/threadcreate?seconds=N over the whole machine, read by
#     go tool pprof: sample type and period type threadcreate/count, and
#     exactly 20 creations under spawn_few and 60 under spawn_many, each
#     labelled with spawner's pid, its kernel stack from copy_process
#     (the creating thread's, at the tracepoint); debug=1 is Go's text
#     ("threadcreate profile: total N");
#   - cprof-dump --kind threadcreate -d N -p PID -f folded: the same
#     counts, nothing of another process, no creation lost.
# Prints the module's cost per creation (what opening and closing such a
# profile costs: b_start).
# Runs on 6.1 and 6.1-rt (u_mutex and u_offcpu on 6.12-rt): the
# tracepoint and its probe are the same on 6.12.
# vm-kernels: 6.1 6.1-rt
# vm-timeout: 120
set -euo pipefail
# shellcheck source=../lib/kprof.sh
. "$REPO/tests/vm/lib/kprof.sh"
# shellcheck source=../lib/uprof.sh
. "$REPO/tests/vm/lib/uprof.sh"

FEW=20
MANY=60
# at most: each round's profile ends with stop=1 once spawner is done, so
# that the window holds its threads however slow the guest is
SECONDS_P=60
kload
"$WORKLOADS/spawner" $FEW $MANY 0.5 >"$OUT/spawner.out" &
sp=$!
bg+=("$sp")
wait_lines "$OUT/spawner.out" 1 || fail "spawner did not start"
pid=$(awk '$1 == "ready" { print $2 }' "$OUT/spawner.out")

# round N: once a profile records, let spawner make its threads; wait
# until it says it is done, then end the profile (its reader answers)
round() {
	wait_profiling || fail "round $1: no profile started"
	# the recorders are in place a moment after the session begins
	sleep "${CPROF_SLOW:-1}"
	kill -USR1 "$sp"
	wait_lines "$OUT/spawner.out" $(($1 + 1)) ||
		fail "round $1: spawner did not finish its threads"
	grep -q "^done $1 $FEW $MANY\$" "$OUT/spawner.out" ||
		fail "round $1: spawner: $(tail -n 1 "$OUT/spawner.out")"
	ctl stop=1
}

http_start || true
http_kind threadcreate "$OUT/tc" round 1
grep -q '^PeriodType: threadcreate count' "$OUT/tc.raw.txt" ||
	fail "threadcreate: period type is not threadcreate/count: $(grep PeriodType "$OUT/tc.raw.txt")"
grep -A1 '^Samples:' "$OUT/tc.raw.txt" | tail -n 1 | grep -Eq '^ *threadcreate/count *$' ||
	fail "threadcreate: sample types are not threadcreate/count: $(grep -A1 '^Samples:' "$OUT/tc.raw.txt" | tail -n 1)"
pp -traces "$OUT/tc.pb.gz" >"$OUT/tc.traces.txt" || fail "go tool pprof -traces failed"
traces_tsv "$OUT/tc.traces.txt" >"$OUT/tc.tsv"
# count FILE FUNC: the creations whose stack holds FUNC, and of them
# those of another pid, or whose kernel stack does not start in
# copy_process (where the task_newtask tracepoint is)
count() {
	rawk -F '\t' -v f="$2" -v p="$pid" '
	{ n = split($trace_stack, fr, ";"); hit = 0
	  for (i = 1; i <= n; i++) if (fr[i] == f) hit = 1 }
	hit { c += $trace_count; if ($trace_pid != p || fr[1] !~ /^copy_process/) bad += $trace_count }
	END { print c + 0, bad + 0 }' "$1"
}
read -r few fbad < <(count "$OUT/tc.tsv" spawn_few)
read -r many mbad < <(count "$OUT/tc.tsv" spawn_many)
total=$(rawk -F '\t' '{ t += $trace_count } END { print t + 0 }' "$OUT/tc.tsv")
echo "http: /debug/pprof/threadcreate?seconds=$SECONDS_P, stopped once spawner was done: $total tasks created on the machine; spawn_few $few, spawn_many $many (want $FEW and $MANY)"
((few == FEW && many == MANY)) || {
	rawk -F '\t' '{ print "  " $trace_count " " $trace_pid " " $trace_stack }' "$OUT/tc.tsv" | head -n 20
	fail "threadcreate: spawn_few $few and spawn_many $many creations, want exactly $FEW and $MANY"
}
((fbad == 0 && mbad == 0)) ||
	fail "threadcreate: $((fbad + mbad)) creations not labelled pid $pid or without clone3 in their kernel stack"
code=$(curl -s --unix-socket "$sock" -o "$OUT/tc.txt" -w '%{http_code}' \
	"http://localhost/debug/pprof/threadcreate?seconds=1&debug=1")
if [[ $code != 200 ]] || ! grep -q '^threadcreate profile: total [0-9]' "$OUT/tc.txt"; then
	fail "threadcreate?debug=1: HTTP $code: $(head -n 3 "$OUT/tc.txt")"
fi
kill "$server"
wait "$server" || true

"$CPROF_DUMP" --kind threadcreate -d "$SECONDS_P" -p "$pid" -f folded \
	-o "$OUT/tc.folded" 2>"$OUT/cli.err" &
cli=$!
round 2
wait "$cli" || fail "cprof-dump --kind threadcreate failed: $(cat "$OUT/cli.err")"
few=$(awk '/;spawn_few;/ { c += $NF } END { print c + 0 }' "$OUT/tc.folded")
many=$(awk '/;spawn_many;/ { c += $NF } END { print c + 0 }' "$OUT/tc.folded")
other=$(awk '!/^spawner;/ { c += $NF } END { print c + 0 }' "$OUT/tc.folded")
echo "cli: --kind threadcreate -d $SECONDS_P -p $pid, stopped once spawner was done: spawn_few $few, spawn_many $many, $other of other processes or lost"
((few == FEW && many == MANY && other == 0)) || {
	head -n 5 "$OUT/tc.folded" "$OUT/cli.err"
	fail "cli: spawn_few $few and spawn_many $many creations ($other others), want exactly $FEW and $MANY"
}
stop
ev=$(stat_of threadcreate_events)
echo "module: $ev creations recorded, $(stat_of threadcreate_skipped) over budget, $(( $(stat_of threadcreate_ns_total) / (ev ? ev : 1) )) ns each on average, $(stat_of threadcreate_ns_max) ns the longest"

echo "u_threadcreate: ok"
