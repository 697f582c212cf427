#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# u_threads: a snapshot of every thread (cprof-dump --kind threads) while
# parked (tests/workloads/parked.c, no frame pointers) holds N sleeping
# threads (in naps of an hour: at parked's default of 1 s, 10000 wake-ups
# a second kept the guest's CPUs busy; the test took 184 s on 6.1 then,
# 132 s now, in one host session):
#   - every thread is in it: each of parked's, and every thread of the
#     machine that lived through the snapshot (listed in /proc before and
#     after), kernel threads included;
#   - parked's sleeping threads: state sleeping, all of them, their user
#     stacks from
#     nap() through park_sleep() to the thread's entry (start_thread or
#     clone3) in 99 % or more, under the kernel's nanosleep path;
#   - the thread blocked in read() shows the syscall (pipe_read, under
#     ksys_read) and its user caller read_pipe;
#   - the spinner is running or preempted, in spin(), and found running
#     (walked on its CPU by an interrupt, its leaf spin) in one of 8
#     snapshots, with CPU 1 its own; the stopped child and the traced child
#     are stopped;
#   - the same snapshot as text (Go's goroutine debug=1: "threads profile:
#     total N", COUNT @ ...) groups parked's N threads on one stack, and
#     as pprof (go tool pprof): sample types threads/count and
#     offcpu/nanoseconds;
#   - cprof-dump --http (6.1 only): the index lists goroutine;
#     /debug/pprof/goroutine?debug=2 lists parked's threads, debug=1 counts
#     them, debug=0 is pprof; debug=2 on /debug/pprof/profile is refused
#     (400);
#   - snapshots taken while processes start and exit (shortlived in a
#     loop) complete.
# Prints the time the pass took (the END record's), cprof-dump's largest
# resident size and the stream's bytes a thread, and writes them to
# $OUT/results (b_threads': the summary's snapshot row).  N is 2000 (b_threads,
# make bench: 10 000); runs on 6.1 and 6.12 (the snapshot is no
# scheduler hook; the RT
# flavours run those, and the k_ tests).
# vm-kernels: 6.1 6.12
# vm-timeout: 400
set -euo pipefail
# shellcheck source=../lib/kprof.sh
. "$REPO/tests/vm/lib/kprof.sh"
# shellcheck source=../lib/uprof.sh
. "$REPO/tests/vm/lib/uprof.sh"

N=${U_THREADS_N:-2000}
kload
"$WORKLOADS/parked" "$N" 3600 >"$OUT/parked.out" &
bg+=($!)
wait_lines "$OUT/parked.out" 3 || fail "parked did not start its $N threads"
pid=$(awk '$1 == "ready" { print $2 }' "$OUT/parked.out")
stopped=$(awk '$1 == "stopped" { print $2 }' "$OUT/parked.out")
traced=$(awk '$1 == "traced" { print $2 }' "$OUT/parked.out")

# every tid of the machine now: kernel threads and all
tids() { for t in /proc/[0-9]*/task/[0-9]*; do echo "${t##*/}"; done | sort -u; }
tids >"$OUT/tids.before"
/usr/bin/time -f '%M' -o "$OUT/rss" "$CPROF_DUMP" --kind threads -f threads \
	-o "$OUT/threads.txt" 2>"$OUT/threads.err" ||
	fail "cprof-dump --kind threads failed: $(cat "$OUT/threads.err")"
tids >"$OUT/tids.after"
sed 's/^/  cprof-dump: /' "$OUT/threads.err"
head -1 "$OUT/threads.txt"
echo "cprof-dump: largest resident size $(cat "$OUT/rss") KiB"
# the stream itself, as cat reads it (no tables loaded by a reader: frame
# pointers and tables already in the module)
ctl kind=threads
bytes=$(wc -c </proc/cprof/profile)
echo "stream: $bytes bytes, $((bytes / $(wc -l <"$OUT/tids.after"))) a thread"
# the figures, key value lines (tests/bench/summary.sh reads b_threads')
awk -v b="$bytes" -v r="$(cat "$OUT/rss")" '
	BEGIN { f["ns"] = 1e-6; f["us"] = 1e-3; f["ms"] = 1; f["s"] = 1e3 }
	/^threads: [0-9]+, looked at in [0-9.]+(ns|us|ms|s)?$/ {
		n = $2; sub(/,/, "", n); t = $NF; u = t; sub(/[a-z]+$/, "", t); sub(/^[0-9.]+/, "", u)
		printf "threads %d\npass_ms %.3f\nstream_bytes %d\nrss_kb %d\n", n, t * f[u], b, r
	}' "$OUT/threads.txt" >"$OUT/results"
[[ -s $OUT/results ]] || fail "no 'threads: N, looked at in Tms' line in the snapshot's text"

# threads.tsv: tid comm pid state frames (";"-joined, leaf first)
awk '
function flush() { if (tid != "") print tid "\t" comm "\t" p "\t" st "\t" fr; tid = "" }
/^thread / {
	flush(); tid = $2; comm = $3; sub(/^\(/, "", comm); sub(/,$/, "", comm)
	p = $5; sub(/\)$/, "", p); st = $6; sub(/^\[/, "", st); sub(/[],:]+$/, "", st); fr = ""; next
}
tid != "" && /^[^\t]/ { fr = fr (fr == "" ? "" : ";") $1 }
END { flush() }' "$OUT/threads.txt" >"$OUT/threads.tsv"

total=$(wc -l <"$OUT/threads.tsv")
comm -12 "$OUT/tids.before" "$OUT/tids.after" >"$OUT/tids.lived"
cut -f1 "$OUT/threads.tsv" | sort -u >"$OUT/tids.seen"
missing=$(comm -23 "$OUT/tids.lived" "$OUT/tids.seen" | grep -vx "$$" || true)
echo "snapshot: $total threads; $(wc -l <"$OUT/tids.lived") lived through it"
[[ -z $missing ]] || fail "threads that lived through the snapshot are not in it: $(echo "$missing" | head -5 | tr '\n' ' ')"
kt=$(awk -F'\t' '$3 == 2 && $2 == "kthreadd"' "$OUT/threads.tsv" | wc -l)
((kt == 1)) || fail "kthreadd (pid 2) is not in the snapshot"

mine() { awk -F'\t' -v p="$pid" -v c="$1" '$3 == p && $2 == c' "$OUT/threads.tsv"; }
nparked=$(mine parked | wc -l)
((nparked == N)) || fail "$nparked of parked's $N sleeping threads in the snapshot"
sleeping=$(mine parked | awk -F'\t' '$4 == "sleeping"' | wc -l)
woken=$(mine parked | awk -F'\t' '$4 == "preempted" || $4 == "running"' | wc -l)
full=$(mine parked | awk -F'\t' '$5 ~ /nanosleep.*;nap;park_sleep;(.*;)?(start_thread|__clone3|__clone)$/' | wc -l)
echo "parked: $nparked threads, $sleeping sleeping, $woken running or waiting for a CPU, $full with nap;park_sleep down to the thread's entry under nanosleep"
# (none wakes during the test: their naps last an hour)
((sleeping == N)) ||
	fail "$sleeping of $N parked threads sleeping, $woken running or waiting for a CPU"
((full * 100 >= N * 99)) || {
	mine parked | awk -F'\t' '$5 !~ /park_sleep;(.*;)?(start_thread|__clone3|__clone)$/ { print "  " $5 }' | sort | uniq -c | sort -rn | head -5
	fail "only $full of $N parked threads' stacks reach their entry through park_sleep"
}
mine piper | awk -F'\t' '{ print "piper: " $4 ": " $5 }'
mine piper | awk -F'\t' '$4 == "sleeping" && $5 ~ /pipe_read;.*ksys_read;.*read_pipe;/' | grep -q . ||
	fail "piper is not sleeping in pipe_read under ksys_read, called from read_pipe"
mine spinner | awk -F'\t' '{ print "spinner: " $4 ": " $5 }'
mine spinner | awk -F'\t' '($4 == "running" || $4 == "preempted") && $5 ~ /spin/' | grep -q . ||
	fail "spinner is not running or preempted in spin"
# on a CPU: walked there by an interrupt.  The spinner gets CPU 1 to
# itself, and cprof-dump, this script and unbound kernel work (the
# snapshot's worker) CPU 0: a worker or reader placed on the spinner's CPU
# preempts it, and then finds it preempted, not running (all 8 snapshots
# did so in one run).
spintid=$(grep -lx spinner /proc/"$pid"/task/*/comm | awk -F/ '{ print $5 }')
[[ $spintid =~ ^[0-9]+$ ]] || fail "parked has no thread named spinner"
taskset -pc 1 "$spintid" >/dev/null
oldaff=$(taskset -p $$ | awk '{ print $NF }')
taskset -pc 0 $$ >/dev/null
wqmask=/sys/devices/virtual/workqueue/cpumask
oldmask=$(<"$wqmask")
trap 'echo "$oldmask" >"$wqmask"' EXIT
echo 1 >"$wqmask"
for ((i = 1; i <= 8; i++)); do
	"$CPROF_DUMP" --kind threads -p "$pid" -f threads -o "$OUT/spin.txt" 2>"$OUT/spin.err" ||
		fail "cprof-dump --kind threads -p failed: $(cat "$OUT/spin.err")"
	grep "^thread [0-9]* (spinner, pid $pid)" "$OUT/spin.txt" | sed "s/^/  snapshot $i: /" || true
	# its user leaf: the first frame, or the one after the entry of an
	# interrupt it took (the IPI may find the CPU in a softirq on the
	# way back to user mode)
	run=$(awk '/^thread .* \(spinner, / { t = 1; getline; leaf = $0; k = 0 }
		t && /^asm_/ { k = 1; next }
		t && k && /^[^\t]/ { leaf = $0; k = 0 }
		t && /^$/ { exit }
		END { if (t) print leaf }' "$OUT/spin.txt")
	grep -q "^thread [0-9]* (spinner, pid $pid) \[running\]:" "$OUT/spin.txt" && break
done
echo "$oldmask" >"$wqmask"
trap - EXIT
taskset -p "$oldaff" $$ >/dev/null
echo "spinner: running in snapshot $i of 8, leaf $run"
grep -q "^thread [0-9]* (spinner, pid $pid) \[running\]:" "$OUT/spin.txt" ||
	fail "the spinner was not found running in 8 snapshots"
[[ $run == spin ]] || fail "the running spinner's user leaf is '$run', not spin"
for c in "stopped $stopped" "traced $traced"; do
	read -r what p <<<"$c"
	st=$(awk -F'\t' -v p="$p" '$3 == p { print $4 }' "$OUT/threads.tsv")
	echo "$what (pid $p): $st"
	[[ $st == stopped ]] || fail "the $what child is '$st', not stopped"
done

# Go's debug=1 form: parked's threads grouped on one stack
"$CPROF_DUMP" --kind threads -p "$pid" -f text -o "$OUT/threads.text" \
	2>"$OUT/text.err" || fail "cprof-dump --kind threads -f text failed: $(cat "$OUT/text.err")"
head -1 "$OUT/threads.text"
grep -q "^threads profile: total $((N + 3))$" "$OUT/threads.text" ||
	fail "text: not 'threads profile: total $((N + 3))' for parked's threads (and main, piper, spinner)"
big=$(awk '/^[0-9]+ @/ && $1 > m { m = $1 } END { print m + 0 }' "$OUT/threads.text")
echo "text: the largest group holds $big threads"
((big * 100 >= N * 99)) || fail "text: the largest group of one stack holds $big threads, not parked's $N"

# pprof
"$CPROF_DUMP" --kind threads -p "$pid" -o "$OUT/threads.pb.gz" 2>"$OUT/pb.err" ||
	fail "cprof-dump --kind threads (pprof) failed: $(cat "$OUT/pb.err")"
pp -raw "$OUT/threads.pb.gz" >"$OUT/threads.raw" || fail "go tool pprof cannot read the snapshot"
grep -Eq "threads/count(\[dflt\])? offcpu/nanoseconds" "$OUT/threads.raw" ||
	fail "pprof: not threads/count and offcpu/nanoseconds: $(grep -m1 -A1 'PeriodType' "$OUT/threads.raw")"
pp -top -sample_index=threads "$OUT/threads.pb.gz" >"$OUT/threads.top"
grep -q " park_sleep$" "$OUT/threads.top" || fail "pprof -top: no park_sleep"

# Served (6.1 only: cprof-dump's work): /debug/pprof/goroutine
if [[ $KVER == 6.1.* ]]; then
	http_start || true
	grep -q "href='goroutine?debug=1'" "$OUT/index.html" ||
		fail "the index page lists no goroutine: $(cat "$OUT/index.html" "$OUT/http.err")"
	get() { curl -s --unix-socket "$sock" -o "$OUT/$1" -w '%{http_code}' "http://localhost/debug/pprof/$2"; }
	code=$(get g2.txt "goroutine?debug=2&pid=$pid")
	[[ $code == 200 ]] || fail "goroutine?debug=2: HTTP $code: $(cat "$OUT/g2.txt" "$OUT/http.err")"
	n2=$(grep -c "^thread [0-9]* (parked, pid $pid) \[" "$OUT/g2.txt" || true)
	((n2 == N)) || fail "goroutine?debug=2: $n2 of parked's $N threads"
	code=$(get g1.txt "goroutine?debug=1&pid=$pid")
	if [[ $code != 200 ]] || ! grep -q "^threads profile: total $((N + 3))$" "$OUT/g1.txt"; then
		fail "goroutine?debug=1: HTTP $code, $(head -1 "$OUT/g1.txt")"
	fi
	code=$(get g0.pb.gz "goroutine?pid=$pid")
	[[ $code != 200 ]] || pp -raw "$OUT/g0.pb.gz" >"$OUT/g0.raw" || true
	if [[ $code != 200 ]] || ! grep -q "threads/count" "$OUT/g0.raw"; then
		fail "goroutine: HTTP $code, not a pprof profile of threads/count"
	fi
	code=$(get p2.txt "profile?seconds=1&debug=2")
	[[ $code == 400 ]] || fail "profile?debug=2: HTTP $code, want 400"
	echo "http: index lists goroutine; goroutine?debug=2: $n2 parked threads; debug=1: total $((N + 3)); debug=0: pprof; profile?debug=2: 400"
	kill "$server"
	wait "$server" || true
fi

# processes coming and going meanwhile
(while :; do "$WORKLOADS/shortlived" 0.01 >/dev/null; done) &
bg+=($!)
for i in 1 2 3; do
	"$CPROF_DUMP" --kind threads -p 0 -f folded -o "$OUT/churn.folded" \
		2>"$OUT/churn.err" || fail "snapshot $i with threads coming and going failed: $(cat "$OUT/churn.err")"
done
churn=$(awk '{ s += $NF } END { print s + 0 }' "$OUT/churn.folded")
echo "churn: 3 snapshots, the last $churn threads"
((churn > N + 3)) || fail "the snapshot of every thread (-p 0) holds $churn threads"
stop
