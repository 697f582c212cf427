#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# u_offcpu: where time goes off the CPU, and a wall-clock profile, through
# cprof-dump --kind offcpu and --kind wall, on offwait's known waits
# (tests/workloads/offwait.c):
#   - off-CPU, folded (microseconds): the sleeper thread's time splits
#     between nap_short and nap_long as the sleeper itself measured it in
#     the profile's window, each nap's clock time less the sleeper's CPU
#     time (within 3 points; nominally 1:3, more to the short nap when the
#     host's load makes each nap overrun), under the
#     kernel's nanosleep path and schedule(); the sleeper is off the CPU
#     about the whole profile (its time within 10 % of the profile's
#     length); the reader thread blocks in read_pipe under the kernel's
#     pipe_read and schedule(); the lockers wait in wait_lock under a futex
#     wait; diowait's reads with O_DIRECT of a slow device (a loop device
#     under dm-delay, 10 ms a read) split between dio_short and dio_long
#     as diowait measured its own waits in the profile's window (within 3
#     points; nominally 1:3, but a loaded emulator does not delay every
#     read alike: once 28.4 % short), under the block device's direct
#     read and schedule(),
#     the thread waiting on the device for half the profile or more;
#   - the same profile as pprof, read by go tool pprof: sample types
#     contentions/count and delay/nanoseconds, a state label (sleeping;
#     -tagfocus=state=uninterruptible keeps dio_long's waits)
#     (on 6.1 only: cprof-dump's, whatever the kernel);
#   - wall, of offwait alone (-p): the worker thread's time splits 1:3
#     between compute (on the CPU, and preempted) and nap_work (25 %
#     within 3 points);
#   - cprof-dump --http (a Unix socket; 6.1 only): the index lists block
#     and wall; /debug/pprof/block?seconds=2&pid=PID is offwait's off-CPU
#     profile (contentions/count, delay/nanoseconds, nap_long in it), and
#     debug=1 is refused for it (400);
#   - /proc/cprof/stats counted the recorded switches (offcpu_events).
# When the module had to record 1 switch in several (a loaded PREEMPT_RT
# guest past budget=50), the off-CPU profile is taken once more.  The
# workloads run past the test's time limit, and the test says so if one
# has exited before a profile.
# Runs on 6.1, 6.12 and 6.12-rt (not 6.1-rt: make check's time).
# vm-timeout: 300
set -euo pipefail
# shellcheck source=../lib/kprof.sh
. "$REPO/tests/vm/lib/kprof.sh"
# shellcheck source=../lib/folded.sh
. "$REPO/tests/vm/lib/folded.sh"
# shellcheck source=../lib/uprof.sh
. "$REPO/tests/vm/lib/uprof.sh"

[[ $KVER != 6.1.*-rt-* ]] || skip "runs on 6.1, 6.12 and 6.12-rt only"
SECS=3
# the highest budget: recording the switches of a loaded PREEMPT_RT guest
# passes a fifth of the default (5 % of a CPU), and then the module records
# 1 switch in several: estimates, which this test's 3 points do not allow
kload budget=50
# the workloads outlive the test (its limit: 300 s times CPROF_SLOW), which
# stops them
life=$((300 * ${CPROF_SLOW:-1}))
OFFWAIT_NAPS=$OUT/naps.txt "$WORKLOADS/offwait" $life >"$OUT/offwait.out" &
bg+=($!)
offwait=$!
wait_lines "$OUT/offwait.out" 5 || fail "offwait did not start its threads"

# running PID NAME WHAT: fail unless the workload PID still runs (its
# status file says so; a zombie does not), WHAT being the step it is for
running() {
	local k v state=
	while read -r k v; do
		[[ $k == State: ]] && state=$v
	done 2>/dev/null <"/proc/$1/status"
	[[ -n $state && $state != Z* ]] ||
		fail "$2 (pid $1, started for ${life} s) is gone before $3: $(tail -n 3 "$OUT/$2.out")"
}

# A slow device: a loop device over a file in memory under dm-delay, 10 ms
# a read; diowait reads it with O_DIRECT, 1:3 between dio_short and
# dio_long.
slowdev() {
	local img loopdev size
	modprobe loop && modprobe dm-delay || return 1
	img=$(mktemp -d)/disk.img
	dd if=/dev/zero of="$img" bs=1M count=8 status=none || return 1
	loopdev=$(losetup -f --show "$img") || return 1
	size=$(blockdev --getsz "$loopdev") || return 1
	echo "0 $size delay $loopdev 0 10" |
		dmsetup create --noudevsync cprofslow || return 1
	dmsetup mknodes cprofslow 2>/dev/null || true
	[[ -b /dev/mapper/cprofslow ]]
}
# (the guest's later tests run in the same boot: the device goes at exit)
trap 'stop; dmsetup remove --noudevsync cprofslow 2>/dev/null; losetup -D' EXIT
slowdev || fail "no slow device (loop + dm-delay)"
DIOWAIT_LOG=$OUT/dio.txt "$WORKLOADS/diowait" /dev/mapper/cprofslow $life >"$OUT/diowait.out" &
bg+=($!)
diowait=$!
wait_lines "$OUT/diowait.out" 1 || fail "diowait did not start"
# The sleeper's and diowait's own totals, "SHORT LONG" us, one line a pair.
# own_share FILE N0 N1: the short one's share (%) of what lines N0 to N1
# of FILE add.
own_share() {
	local s0 l0 s1 l1
	read -r s0 l0 < <(sed -n "${2}p" "$1")
	read -r s1 l1 < <(sed -n "${3}p" "$1")
	pct $((s1 - s0)) $((s1 - s0 + l1 - l0))
}
wait_lines "$OUT/naps.txt" 1 || fail "offwait's sleeper wrote no nap times"
wait_lines "$OUT/dio.txt" 1 || fail "diowait wrote no wait times"

# offcpu_profile: the profile, and the sleeper's and diowait's lines from
# its start to its end
offcpu_profile() {
	running "$offwait" offwait "the off-CPU profile"
	running "$diowait" diowait "the off-CPU profile"
	ev0=$(stat_of offcpu_events)
	"$CPROF_DUMP" -d $SECS --kind offcpu -f folded -o "$OUT/off.folded" 2>"$OUT/off.err" &
	dump=$!
	wait_profiling || fail "cprof-dump --kind offcpu started no profile: $(cat "$OUT/off.err")"
	n0=$(wc -l <"$OUT/naps.txt")
	d0=$(wc -l <"$OUT/dio.txt")
	sleep $SECS
	n1=$(wc -l <"$OUT/naps.txt")
	d1=$(wc -l <"$OUT/dio.txt")
	wait "$dump" || fail "cprof-dump --kind offcpu failed: $(cat "$OUT/off.err")"
	ev1=$(stat_of offcpu_events)
}
offcpu_profile
# A loaded PREEMPT_RT guest can pass even the highest budget: the module
# then records 1 switch in several, whose times are estimates this test's
# bounds do not allow (once the sleeper's 2.6 s of 3).  Once more then.
if grep -q 'recording switches passed the module' "$OUT/off.err"; then
	echo "off-CPU: the module recorded 1 switch in several ($(grep -o 'it recorded 1 in up to [0-9]*' "$OUT/off.err")): profiled again"
	offcpu_profile
fi
((n1 > n0)) || fail "offwait's sleeper napped no pair of naps during the profile"
own=$(own_share "$OUT/naps.txt" "$n0" "$n1")
echo "off-CPU: $((ev1 - ev0)) switches recorded, $(wc -l <"$OUT/off.folded") stacks"
sed 's/^/  cprof-dump: /' "$OUT/off.err"

short=$(us "$OUT/off.folded" sleeper ';nap_short;')
long=$(us "$OUT/off.folded" sleeper ';nap_long;')
all=$(us "$OUT/off.folded" sleeper '')
sched=$(us "$OUT/off.folded" sleeper ';nap_(short|long);.*nanosleep.*;schedule_\[k\]')
echo "sleeper: nap_short ${short} us, nap_long ${long} us ($(pct "$short" $((short + long)))% short; the sleeper measured ${own}% in $((n1 - n0)) pairs of naps), ${all} us in all, ${sched} us under the kernel's nanosleep and schedule()"
within "$(pct "$short" $((short + long)))" "$own" 3 ||
	fail "sleeper: nap_short is $(pct "$short" $((short + long)))% of the naps, not the ${own}% the sleeper measured, within 3 points$(grep -o ': recording switches passed.*' "$OUT/off.err")"
within "$(pct "$all" $((SECS * 1000000)))" 100 10 ||
	fail "sleeper: ${all} us off the CPU in a ${SECS} s profile"
((sched * 10 >= (short + long) * 9)) ||
	fail "sleeper: only ${sched} of $((short + long)) us under the kernel's nanosleep path and schedule()"

rd=$(us "$OUT/off.folded" reader ';read_pipe;.*pipe_read_\[k\].*;schedule_\[k\]')
echo "reader: ${rd} us in read_pipe under pipe_read and schedule()"
within "$(pct "$rd" $((SECS * 1000000)))" 100 10 ||
	fail "reader: ${rd} us blocked in read_pipe under pipe_read in a ${SECS} s profile"

((d1 > d0)) || fail "diowait made no pair of reads during the profile"
down=$(own_share "$OUT/dio.txt" "$d0" "$d1")
ds=$(us "$OUT/off.folded" dio ';dio_short;.*blkdev.*;schedule_\[k\]')
dl=$(us "$OUT/off.folded" dio ';dio_long;.*blkdev.*;schedule_\[k\]')
echo "dio: dio_short ${ds} us, dio_long ${dl} us ($(pct "$ds" $((ds + dl)))% short; diowait measured ${down}% in $((d1 - d0)) pairs) waiting on the device (O_DIRECT, the block layer's wait)"
within "$(pct "$ds" $((ds + dl)))" "$down" 3 ||
	fail "dio: dio_short is $(pct "$ds" $((ds + dl)))% of the device waits, not the ${down}% diowait measured, within 3 points"
# (each read costs CPU time too, more so on a loaded host: at least half)
((ds + dl >= SECS * 1000000 / 2)) ||
	fail "dio: $((ds + dl)) us waiting on the device in a ${SECS} s profile"

lw=$(us "$OUT/off.folded" locker ';wait_lock;.*futex.*_\[k\]')
echo "lockers: ${lw} us in wait_lock under a futex wait"
((lw > SECS * 1000000 / 5)) || fail "lockers: only ${lw} us waiting in wait_lock under a futex wait"
((ev1 > ev0)) || fail "stats: no offcpu_events"

# The same kind as pprof (cprof-dump's work: one kernel is enough).
pprof_too=$([[ $KVER == 6.1.* ]] && echo 1 || echo 0)
if ((pprof_too)); then
	"$CPROF_DUMP" -d 2 --kind offcpu -o "$OUT/off.pb.gz" 2>"$OUT/offpb.err" ||
		fail "cprof-dump --kind offcpu (pprof) failed: $(cat "$OUT/offpb.err")"
	pp -raw "$OUT/off.pb.gz" >"$OUT/off.raw.txt" || fail "go tool pprof cannot read it: $(tail -n 3 "$OUT/pprof.err")"
	grep -q '^PeriodType: contentions count' "$OUT/off.raw.txt" ||
		fail "pprof: period type is not contentions/count: $(grep PeriodType "$OUT/off.raw.txt")"
	grep -Eq '^ *contentions/count delay/nanoseconds' "$OUT/off.raw.txt" ||
		fail "pprof: sample types are not contentions/count delay/nanoseconds: $(grep -A1 '^Samples:' "$OUT/off.raw.txt" | tail -n 1)"
	pp -tags "$OUT/off.pb.gz" >"$OUT/off.tags.txt" || fail "go tool pprof -tags failed"
	grep -q 'sleeping' "$OUT/off.tags.txt" || fail "pprof: no state label 'sleeping'"
	# the waits on the device, by their state alone (README's example)
	pp -top -tagfocus=state=uninterruptible "$OUT/off.pb.gz" >"$OUT/off.io.txt" ||
		fail "go tool pprof -tagfocus=state=uninterruptible failed"
	grep -q ' dio_long$' "$OUT/off.io.txt" ||
		fail "pprof: -tagfocus=state=uninterruptible does not keep the device waits (dio_long): $(head -n 12 "$OUT/off.io.txt")"
	echo "pprof: contentions/count, delay/nanoseconds, state labels: $(awk '/state:/ { s = 1; next } s && NF >= 3 { printf "%s ", $NF } /^ *$/ { s = 0 }' "$OUT/off.tags.txt")"
fi

# Wall clock of offwait alone: on and off the CPU in one profile.
pid=$offwait
running "$pid" offwait "the wall profile"
"$CPROF_DUMP" -d $SECS -F 499 -p "$pid" --kind wall -f folded -o "$OUT/wall.folded" \
	2>"$OUT/wall.err" || fail "cprof-dump --kind wall failed: $(cat "$OUT/wall.err")"
cw=$(us "$OUT/wall.folded" worker ';compute(;|$)')
nw=$(us "$OUT/wall.folded" worker ';nap_work;')
echo "wall: worker compute ${cw} us, nap_work ${nw} us ($(pct "$cw" $((cw + nw)))% compute)"
within "$(pct "$cw" $((cw + nw)))" 25 3 ||
	fail "wall: worker's compute is $(pct "$cw" $((cw + nw)))% of compute and nap_work, not 25% within 3 points"

# Served: /debug/pprof/block and /debug/pprof/wall (6.1 only, as pprof).
((pprof_too)) || { stop; echo "u_offcpu: ok"; exit 0; }
sock=$(mktemp -d)/pprof.sock	# not on the 9p share: no sockets there
"$CPROF_DUMP" --http "unix:$sock" 2>"$OUT/http.err" &
server=$!
for ((i = 0; i < 100 * ${CPROF_SLOW:-1}; i++)); do
	[[ -S $sock ]] && curl -sf --unix-socket "$sock" http://localhost/debug/pprof/ >"$OUT/index.html" && break
	sleep 0.1
done
if ! grep -q "href='block'" "$OUT/index.html" || ! grep -q "href='wall'" "$OUT/index.html"; then
	fail "the index page lists no block or wall: $(cat "$OUT/index.html" "$OUT/http.err")"
fi
code=$(curl -s --unix-socket "$sock" -o "$OUT/block.pb.gz" -w '%{http_code}' \
	"http://localhost/debug/pprof/block?seconds=2&pid=$pid")
[[ $code == 200 ]] || fail "block: HTTP $code: $(cat "$OUT/block.pb.gz" "$OUT/http.err")"
pp -raw "$OUT/block.pb.gz" >"$OUT/block.raw.txt" || fail "go tool pprof cannot read /debug/pprof/block"
grep -Eq '^ *contentions/count delay/nanoseconds' "$OUT/block.raw.txt" ||
	fail "block: sample types are not contentions/count delay/nanoseconds"
grep -q 'nap_long' "$OUT/block.raw.txt" || fail "block: offwait's nap_long is not in it"
code=$(curl -s --unix-socket "$sock" -o "$OUT/block.txt" -w '%{http_code}' \
	"http://localhost/debug/pprof/block?seconds=1&debug=1")
[[ $code == 400 ]] || fail "block?debug=1: HTTP $code, want 400"
echo "http: index lists block and wall; /debug/pprof/block?seconds=2&pid=$pid: 200, $(stat -c %s "$OUT/block.pb.gz") bytes of pprof with nap_long; debug=1: 400"
kill "$server"
wait "$server" || true
stop
echo "u_offcpu: ok"
