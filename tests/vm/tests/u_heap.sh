#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# u_heap: where a process's live memory was allocated (profile kind
# heap), against the program's own count.  heaper
# (tests/workloads/heaper.c) keeps, at each SIGUSR1, 8 MiB from keep_few
# (by realloc(NULL, n)) and 24 MiB from keep_many (by malloc and
# posix_memalign(16) in turn; 1:3, 16 KiB blocks; glibc's realloc and
# posix_memalign call malloc: each counted once, at its caller) while
# churn allocates and
# frees 64 MiB, and prints what it kept; each profile is started first
# and ended with stop=1 once heaper is done:
#   - cprof-dump --kind heap -d N -p PID --rate 16384, read by go tool
#     pprof: Go's four sample types, space/bytes the period type;
#     inuse_space splits between keep_few and keep_many within 3 points of
#     heaper's own split; alloc_space ranks churn first;
#   - the probes go with the reader: while a profile runs, malloc's first
#     byte in heaper's memory is a breakpoint (int3); once the reader is
#     killed -9 it is malloc's own again, and a malloc and free pair is as
#     fast as before the profile (within 3 times, a noisy guest);
#   - a 3 s profile whose reader is stopped (SIGSTOP) loses its probes at
#     the deadline all the same; a profile ends when its process exits.
# Prints the module's cost per recorded allocation and the speeds.
# vm-kernels: 6.12 6.1-rt
# vm-timeout: 180
set -euo pipefail
# shellcheck source=../lib/kprof.sh
. "$REPO/tests/vm/lib/kprof.sh"
# shellcheck source=../lib/uprof.sh
. "$REPO/tests/vm/lib/uprof.sh"

FEW_KB=8192
MANY_KB=24576
CHURN_KB=65536
BLOCK=16384
RATE=16384
SECONDS_P=120
kload
"$WORKLOADS/heaper" $FEW_KB $MANY_KB $CHURN_KB $BLOCK >"$OUT/heaper.out" &
hp=$!
bg+=("$hp")
wait_lines "$OUT/heaper.out" 1 || fail "heaper did not start"
pid=$(awk '$1 == "ready" { print $2 }' "$OUT/heaper.out")

# signal SIG TENTHS: send heaper SIG, wait for the line it prints then
signal() {
	local n
	n=$(wc -l <"$OUT/heaper.out")
	kill "-$1" "$hp"
	wait_lines "$OUT/heaper.out" $((n + 1)) "$2"
}

# speed: heaper's ns for a malloc and free pair now
speed() {
	signal USR2 $((100 * ${CPROF_SLOW:-1})) ||
		fail "heaper did not time its mallocs"
	tail -n 1 "$OUT/heaper.out" | awk '$1 == "speed" { print $2 }'
}

# round N: once a profile records, let heaper allocate; wait until it
# says it is done, then end the profile
round() {
	wait_profiling || fail "round $1: no profile started"
	sleep "${CPROF_SLOW:-1}"
	signal USR1 $((600 * ${CPROF_SLOW:-1})) ||
		fail "round $1: heaper did not finish"
	grep -q "^done $1 " "$OUT/heaper.out" ||
		fail "round $1: heaper: $(tail -n 1 "$OUT/heaper.out")"
	ctl stop=1
}

# cum FILE FUNC: FUNC's cumulative bytes in go tool pprof -top -unit=B
cum() {
	rawk -v f="$2" '$top_name == f { v = $top_cum; sub(/B$/, "", v); print v + 0; found = 1 }
	END { if (!found) print 0 }' "$1"
}

# heap_check BASE WHAT: the profile BASE.pb.gz against heaper's last round
heap_check() {
	local base=$1 what=$2 few many churn tfew tmany share tshare
	pp -raw "$base.pb.gz" >"$base.raw.txt" ||
		fail "$what: go tool pprof cannot read the profile: $(tail -n 3 "$OUT/pprof.err")"
	grep -A1 '^Samples:' "$base.raw.txt" | tail -n 1 |
		grep -Eq '^ *alloc_objects/count +alloc_space/bytes +inuse_objects/count +inuse_space/bytes *$' ||
		fail "$what: sample types are not Go's heap profile's: $(grep -A1 '^Samples:' "$base.raw.txt" | tail -n 1)"
	grep -q '^PeriodType: space bytes' "$base.raw.txt" ||
		fail "$what: period type is not space/bytes: $(grep PeriodType "$base.raw.txt")"
	pp -top -nodecount=1000 -nodefraction=0 -sample_index=inuse_space \
		-unit=B "$base.pb.gz" >"$base.inuse.txt" || fail "$what: go tool pprof -top failed"
	pp -top -nodecount=1000 -nodefraction=0 -sample_index=alloc_space \
		-unit=B "$base.pb.gz" >"$base.alloc.txt" || fail "$what: go tool pprof -top failed"
	read -r tfew tmany < <(awk '$1 == "done" { f = $4; m = $6 } END { print f, m }' "$OUT/heaper.out")
	few=$(cum "$base.inuse.txt" keep_few)
	many=$(cum "$base.inuse.txt" keep_many)
	share=$(awk -v a="$few" -v b="$many" 'BEGIN { if (a + b > 0) printf "%.1f", 100 * a / (a + b); else print -100 }')
	tshare=$(awk -v a="$tfew" -v b="$tmany" 'BEGIN { printf "%.1f", 100 * a / (a + b) }')
	echo "$what: inuse_space keep_few $few B, keep_many $many B: keep_few's share $share% (heaper's own: $tfew and $tmany B, $tshare%)"
	awk -v s="$share" -v t="$tshare" 'BEGIN { d = s - t; exit !(d <= 3 && d >= -3) }' || {
		head -n 20 "$base.inuse.txt"
		fail "$what: keep_few's share of inuse_space $share%, heaper's $tshare%: more than 3 points apart"
	}
	churn=$(cum "$base.alloc.txt" churn)
	few=$(cum "$base.alloc.txt" keep_few)
	many=$(cum "$base.alloc.txt" keep_many)
	echo "$what: alloc_space churn $churn B, keep_many $many B, keep_few $few B (heaper: churn allocated $(awk '$1 == "done" { c = $8 } END { print c }' "$OUT/heaper.out") B)"
	((churn > many && many > few)) || {
		head -n 20 "$base.alloc.txt"
		fail "$what: alloc_space does not rank churn, keep_many, keep_few"
	}
}

before=$(speed)
"$CPROF_DUMP" --kind heap -d "$SECONDS_P" -p "$pid" --rate "$RATE" \
	-o "$OUT/cli.pb.gz" 2>"$OUT/cli.err" &
cli=$!
round 1
wait "$cli" || fail "cprof-dump --kind heap failed: $(cat "$OUT/cli.err")"
heap_check "$OUT/cli" cli
ev=$(stat_of heap_events)
echo "module: $ev allocations recorded, $(stat_of heap_frees) frees, $(stat_of heap_full) without room, $(stat_of heap_skipped) over budget, $(($(stat_of heap_ns_total) / (ev ? ev : 1))) ns each on average, $(stat_of heap_ns_max) ns the longest"

# The same over HTTP, as go tool pprof fetches it.
http_start || fail "cprof-dump --http did not start: $(cat "$OUT/http.err")"
for k in heap allocs; do
	grep -q "href='$k'" "$OUT/index.html" ||
		fail "the index page lists no $k: $(cat "$OUT/index.html")"
done
code=$(curl -s --unix-socket "$sock" -o "$OUT/nopid.txt" -w '%{http_code}' \
	"http://localhost/debug/pprof/heap?seconds=1")
if [[ $code != 400 ]] || ! grep -q 'pid=PID is required' "$OUT/nopid.txt"; then
	fail "heap without pid=: HTTP $code: $(cat "$OUT/nopid.txt")"
fi
curl -s --unix-socket "$sock" -o "$OUT/http.pb.gz" -w '%{http_code}' \
	"http://localhost/debug/pprof/heap?seconds=$SECONDS_P&pid=$pid&rate=$RATE" >"$OUT/http.code" &
req=$!
round 2
wait "$req" || fail "curl failed"
code=$(cat "$OUT/http.code")
[[ $code == 200 ]] || fail "heap: HTTP $code: $(head -c 300 "$OUT/http.pb.gz"; tail -n 3 "$OUT/http.err")"
heap_check "$OUT/http" http
grep -q 'allocations made before the probes attached are unseen' "$OUT/http.raw.txt" ||
	fail "http: the profile does not say earlier allocations are unseen"
kill "$server"
wait "$server" || true

# The probes go with their reader, killed -9.
byte_at() { # ADDR: the byte at ADDR in heaper's memory, in hex
	dd if="/proc/$pid/mem" bs=1 count=1 skip=$(($1)) iflag=skip_bytes 2>/dev/null |
		od -An -tx1 | tr -d ' \n'
}
"$CPROF_DUMP" --kind heap -d "$SECONDS_P" -p "$pid" --rate "$RATE" \
	-o "$OUT/killed.pb.gz" 2>"$OUT/killed.err" &
k=$!
wait_profiling || fail "killed: no profile started"
addr=$(sed -n 's/^heap_malloc=//p' /proc/cprof/ctl)
[[ $addr == 0x* ]] || fail "ctl shows no heap_malloc address: $(cat /proc/cprof/ctl)"
for ((i = 0; i < 50; i++)); do
	[[ $(byte_at "$addr") == cc ]] && break
	sleep 0.1
done
[[ $(byte_at "$addr") == cc ]] || fail "malloc at $addr in heaper is $(byte_at "$addr"), not a breakpoint, while profiled"
during=$(speed)
kill -9 "$k"
wait "$k" 2>/dev/null || true
for ((i = 0; i < 50; i++)); do
	[[ $(stat_of profiling) == 0 ]] && break
	sleep 0.1
done
for ((i = 0; i < 50; i++)); do
	[[ $(byte_at "$addr") != cc ]] && break
	sleep 0.1
done
[[ $(byte_at "$addr") != cc ]] ||
	fail "malloc at $addr in heaper is still a breakpoint after the reader was killed -9 (profiling $(stat_of profiling); $(pgrep -a cprof-dump | head -n 3))"
after=$(speed)
echo "speed: a malloc and free pair ${before} ns before, ${during} ns under the probes, ${after} ns once the reader was killed -9"
((after < 3 * before + 100)) ||
	fail "malloc and free take ${after} ns after the reader was killed, ${before} ns before: the probes stayed"

# The probes go at the deadline though the reader, stopped, never reads.
"$CPROF_DUMP" --kind heap -d 3 -p "$pid" --rate "$RATE" \
	-o "$OUT/stopped.pb.gz" 2>"$OUT/stopped.err" &
k=$!
wait_profiling || fail "stopped: no profile started"
for ((i = 0; i < 50; i++)); do
	[[ $(byte_at "$addr") == cc ]] && break
	sleep 0.1
done
kill -STOP "$k"
t0=$SECONDS
for ((i = 0; i < 100 * ${CPROF_SLOW:-1}; i++)); do
	[[ $(byte_at "$addr") != cc ]] && break
	sleep 0.1
done
[[ $(byte_at "$addr") != cc ]] ||
	fail "malloc at $addr in heaper is still a breakpoint past a 3 s profile's deadline, its reader stopped"
echo "stopped reader: malloc's breakpoint gone $((SECONDS - t0)) s after the reader stopped (deadline 3 s)"
kill -CONT "$k"
wait "$k" || fail "cprof-dump of a 3 s profile, stopped and continued, failed: $(cat "$OUT/stopped.err")"

# A profile of a process that exits ends then, long before its deadline.
"$CPROF_DUMP" --kind heap -d "$SECONDS_P" -p "$pid" --rate "$RATE" \
	-o "$OUT/exited.pb.gz" 2>"$OUT/exited.err" &
k=$!
wait_profiling || fail "exited: no profile started"
kill "$hp"
wait "$hp" 2>/dev/null || true
t0=$SECONDS
for ((i = 0; i < 100 * ${CPROF_SLOW:-1}; i++)); do
	kill -0 "$k" 2>/dev/null || break
	sleep 0.1
done
kill -0 "$k" 2>/dev/null &&
	fail "a ${SECONDS_P} s heap profile still runs 10 s after its process exited"
wait "$k" || fail "cprof-dump of an exited process failed: $(cat "$OUT/exited.err")"
echo "exited process: its profile ended $((SECONDS - t0)) s after it did"
stop
echo "u_heap: ok"
