#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# k_jobctl: only a fatal signal, "stop=1" or rmmod end a profile.
#   - a reader stopped (SIGSTOP) and continued gets its whole profile: END
#     at the deadline, reason "complete";
#   - so does a reader that strace attaches to and detaches from, and one
#     whose cgroup is frozen and thawed;
#   - a caught signal is handled while the reader waits in read(), and the
#     profile goes on; the reader then asks for the end with stop=1, as
#     cprof-dump does;
#   - a fatal signal ends it at once;
#   - rmmod returns while the reader is stopped;
#   - stop=1 stops the ticks at once even while the reader is stopped.
# vm-kernels: 6.1 6.12-rt
# vm-timeout: 180
set -euo pipefail
# shellcheck source=../lib/kprof.sh
. "$REPO/tests/vm/lib/kprof.sh"

# check_complete RAW WHAT: RAW is well-formed and ran to its deadline.
check_complete() {
	"$WORKLOADS/streamtext" <"$1" >"$1.txt" || fail "$2: the stream is malformed"
	read -r dur reason < <(rawk '$1 == "E" { print $E_duration_ns, $E_reason }' "$1.txt")
	echo "$2: END reason $reason after $((dur / 1000000)) ms"
	((reason == 0)) || fail "$2: END reason $reason, want 0 (complete)"
	((dur >= secs * 1000000000 - 100000000)) || fail "$2: the profile lasted only $dur ns of $secs s"
}

# 4 s, longer on a slow guest: each profile must outlast what is done to
# its reader.
secs=$((4 * ${CPROF_SLOW:-1}))
kload
ctl freq=199 seconds=$secs
"$WORKLOADS/cpuburn" 60 >/dev/null &
burner=$!

# SIGSTOP, SIGCONT.
reader_start "$OUT/stop.raw"
sleep 1
kill -STOP "$READER"
sleep 1.5
[[ $(stat_of profiling) == 1 ]] || fail "the profile ended when its reader was stopped"
kill -CONT "$READER"
wait "$READER" || fail "the continued reader failed"
check_complete "$OUT/stop.raw" "SIGSTOP/SIGCONT"

# stop=1 while the reader is stopped: the ticks stop at once, and the
# continued reader gets the stream up to then (END reason 3).
reader_start "$OUT/stopped.raw"
kill -STOP "$READER"
ctl stop=1
t1=$(stat_of ticks)
sleep 1
t2=$(stat_of ticks)
kill -CONT "$READER"
wait "$READER" || fail "the continued reader failed"
"$WORKLOADS/streamtext" <"$OUT/stopped.raw" >"$OUT/stopped.txt" || fail "the stream is malformed"
read -r reason < <(rawk '$1 == "E" { print $E_reason }' "$OUT/stopped.txt")
echo "stop=1 with the reader stopped: ticks $t1 then $t2 a second later; END reason $reason"
((t1 == t2)) || fail "the ticks went on after stop=1 ($t1 -> $t2)"
((reason == 3)) || fail "END reason $reason, want 3 (stop=1)"

# ptrace: strace attaches and detaches.
if command -v strace >/dev/null; then
	reader_start "$OUT/ptrace.raw"
	strace -q -p "$READER" -o /dev/null &
	tracer=$!
	sleep 1.5
	kill -INT "$tracer"
	wait "$tracer" || true
	wait "$READER" || fail "the traced reader failed"
	check_complete "$OUT/ptrace.raw" "strace -p"
else
	echo "strace missing: ptrace not checked"
fi

# The freezer (cgroup v2).
cg=/sys/fs/cgroup
[[ -f $cg/cgroup.procs ]] || mount -t cgroup2 none "$cg"
if [[ -f $cg/cgroup.subtree_control ]] && mkdir "$cg/cprof_jobctl" 2>/dev/null; then
	cat /proc/cprof/profile >"$OUT/freeze.raw" &
	reader=$!
	echo "$reader" >"$cg/cprof_jobctl/cgroup.procs"
	wait_profiling || fail "the profile did not start"
	sleep 0.5
	echo 1 >"$cg/cprof_jobctl/cgroup.freeze"
	for _ in $(seq 1 50); do
		grep -q '^frozen 1' "$cg/cprof_jobctl/cgroup.events" && break
		sleep 0.1
	done
	grep -q '^frozen 1' "$cg/cprof_jobctl/cgroup.events" || fail "the reader did not freeze"
	sleep 1
	echo 0 >"$cg/cprof_jobctl/cgroup.freeze"
	wait "$reader" || fail "the thawed reader failed"
	rmdir "$cg/cprof_jobctl"
	check_complete "$OUT/freeze.raw" "cgroup freeze/thaw"
else
	echo "no cgroup v2 here: the freezer not checked"
fi

# A caught signal: handled, the profile goes on (perl restarts an
# interrupted read itself); the second one writes stop=1.
ctl seconds=60
perl -e '$n = 0;
	$SIG{INT} = sub {
		$n++;
		print STDERR "SIGINT $n\n";
		return if $n < 2;
		open(my $c, ">", "/proc/cprof/ctl") or die "ctl: $!\n";
		syswrite($c, "stop=1\n") or die "stop=1: $!\n";
	};
	open(my $f, "<", "/proc/cprof/profile") or die "open: $!\n";
	binmode $f; binmode STDOUT;
	my $b;
	while (1) {
		my $r = sysread($f, $b, 65536);
		next if !defined $r && $!{EINTR};
		die "read: $!\n" if !defined $r;
		last if !$r;
		print $b;
	}' >"$OUT/int.raw" 2>"$OUT/int.err" &
reader=$!
wait_profiling || fail "the profile did not start"
# in read() (system call 0) when the signal lands
in_read() {
	local i
	for ((i = 0; i < 200; i++)); do
		[[ $(cut -d' ' -f1 "/proc/$1/syscall" 2>/dev/null) == 0 ]] && return 0
		sleep 0.05
	done
	return 1
}
in_read "$reader" || fail "the reader never waited in read()"
kill -INT "$reader"
wait_lines "$OUT/int.err" 1 || fail "the signal was not handled while the reader was in read()"
sleep 1
[[ $(stat_of profiling) == 1 ]] || fail "a caught signal ended the profile"
in_read "$reader" || fail "the reader did not go back to read()"
kill -INT "$reader"
wait "$reader" || fail "the reader failed: $(cat "$OUT/int.err")"
"$WORKLOADS/streamtext" <"$OUT/int.raw" >"$OUT/int.txt" || fail "the interrupted stream is malformed"
reason=$(rawk '$1 == "E" { print $E_reason }' "$OUT/int.txt")
echo "caught SIGINT: handled in read(), the profile went on; stop=1 then ended it with reason $reason"
((reason == 3)) || fail "END reason $reason, want 3 (stop=1)"

# A fatal signal ends the profile.
cat /proc/cprof/profile >/dev/null &
reader=$!
wait_profiling || fail "the profile did not start"
kill -TERM "$reader"
wait "$reader" || true
for _ in $(seq 1 $((50 * ${CPROF_SLOW:-1}))); do
	[[ $(stat_of profiling) == 0 ]] && break
	sleep 0.1
done
[[ $(stat_of profiling) == 0 ]] || fail "still profiling after the reader was killed"
echo "SIGTERM to cat: the profile ended"

# rmmod with a stopped reader.
cat /proc/cprof/profile >"$OUT/rmmod.raw" 2>/dev/null &
reader=$!
wait_profiling || fail "the profile did not start"
kill -STOP "$reader"
t0=${EPOCHREALTIME/./}
rmmod cprof || fail "rmmod with a stopped reader failed"
ms=$(((${EPOCHREALTIME/./} - t0) / 1000))
kill -CONT "$reader"
wait "$reader" || true
echo "rmmod with a stopped reader returned in $ms ms"
((ms < $(slow_ms 15000))) || fail "rmmod took $ms ms with a stopped reader"
kill "$burner" 2>/dev/null || true
echo "k_jobctl: ok"
