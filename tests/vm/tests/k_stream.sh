#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# k_stream: /proc/cprof/profile behaves like Go's profile?seconds=N.
#   - root only: an unprivileged user can open no /proc/cprof file;
#   - EOF after the configured seconds, with an END record that accounts
#     for every sample in the stream;
#   - a second concurrent reader gets EBUSY;
#   - "stop=1" ends the profile early: the reader gets what was collected
#     and a well-formed stream (END, reason "stop"); written while no
#     profile runs, it does not reach the next one;
#   - the stream is delivered while it is collected, not at the end.
# vm-kernels: 6.1 6.12-rt
# vm-timeout: 150
set -euo pipefail
# shellcheck source=../lib/kprof.sh
. "$REPO/tests/vm/lib/kprof.sh"

kload
for f in profile ctl stats; do
	if setpriv --reuid=65534 --regid=65534 --clear-groups cat "/proc/cprof/$f" >/dev/null 2>&1; then
		fail "user nobody could read /proc/cprof/$f"
	fi
done
if setpriv --reuid=65534 --regid=65534 --clear-groups sh -c 'echo freq=5 >/proc/cprof/ctl' 2>/dev/null; then
	fail "user nobody could write /proc/cprof/ctl"
fi
echo "unprivileged access refused"

# EOF after seconds, END accounts for the samples.
ctl freq=499 seconds=2
"$WORKLOADS/cpuburn" 4 >/dev/null &
start=$(date +%s%N)
profile "$OUT/a.raw"
ms=$((($(date +%s%N) - start) / 1000000))
echo "seconds=2 profile took ${ms} ms"
((ms >= 1900 && ms < $(slow_ms 30000))) || fail "a 2 s profile took ${ms} ms"
read -r dur reason samples lost < <(rawk '$1 == "E" { print $E_duration_ns, $E_reason, $E_samples, $E_lost }' "$OUT/a.raw.txt")
nsamp=$(grep -c '^S ' "$OUT/a.raw.txt")
nlost=$(rawk '$1 == "L" { n += $L_samples } END { print n + 0 }' "$OUT/a.raw.txt")
echo "END: duration ${dur} ns reason $reason samples $samples lost $lost; stream has $nsamp samples, $nlost lost"
((reason == 0)) || fail "END reason $reason, want 0 (complete)"
((dur >= 1900000000 && dur < 3000000000)) || fail "END duration $dur ns"
((samples == nsamp)) || fail "END says $samples samples, stream has $nsamp"
((lost == nlost)) || fail "END says $lost lost, LOST records say $nlost"
((nsamp >= 200)) || fail "only $nsamp samples in 2 s at 499 Hz with a CPU busy"
wait

# Second reader: EBUSY.  Streaming: data arrives before the end.  "stop=1"
# in ctl ends the profile early, the stream well-formed (what cprof-dump -d
# does on Ctrl-C; signals other than fatal ones do not end a profile:
# k_jobctl).
ctl seconds=60
perl -e 'open(my $f, "<", "/proc/cprof/profile") or die "open: $!\n";
	binmode $f; binmode STDOUT;
	my ($b, $first);
	while (1) {
		my $r = sysread($f, $b, 65536);
		die "read: $!\n" if !defined $r;
		last if !$r;
		print STDERR "first data\n" if !$first++;
		print $b;
	}' >"$OUT/b.raw" 2>"$OUT/b.err" &
reader=$!
wait_lines "$OUT/b.err" 1 || true
if cat /proc/cprof/profile >/dev/null 2>"$OUT/busy.err"; then
	fail "a second reader could open /proc/cprof/profile"
fi
grep -q "Device or resource busy" "$OUT/busy.err" || fail "second reader: $(cat "$OUT/busy.err")"
grep -q "first data" "$OUT/b.err" || fail "no data streamed in the first $((10 * ${CPROF_SLOW:-1})) s of a 60 s profile"
start=$(date +%s%N)
ctl stop=1
wait "$reader" || fail "the reader failed after stop=1: $(cat "$OUT/b.err")"
ms=$((($(date +%s%N) - start) / 1000000))
"$WORKLOADS/streamtext" <"$OUT/b.raw" >"$OUT/b.txt" || fail "stream ended by stop=1 is not well-formed"
read -r reason samples < <(rawk '$1 == "E" { print $E_reason, $E_samples }' "$OUT/b.txt")
echo "stop=1 ended the profile in ${ms} ms, END reason $reason, $samples samples"
((reason == 3 && ms < $(slow_ms 5000))) || fail "stop=1: END reason $reason after ${ms} ms, want 3 promptly"
((samples == $(grep -c '^S ' "$OUT/b.txt"))) || fail "END samples disagree with the stream"
[[ $(stat_of profiling) == 0 ]] || fail "still profiling after the reader left"

# stop=1 with no profile running is a no-op: the next profile runs whole.
ctl stop=1
ctl seconds=1
profile "$OUT/c.raw"
reason=$(rawk '$1 == "E" { print $E_reason }' "$OUT/c.raw.txt")
((reason == 0)) || fail "a stop=1 written before the profile ended it (reason $reason)"
echo "stop=1 written while idle does not reach the next profile"

# The ticks stop at the deadline even if the reader stops reading.
ctl seconds=1
exec 5</proc/cprof/profile
sleep 3
t1=$(stat_of ticks)
sleep 1
t2=$(stat_of ticks)
exec 5<&-
echo "ticks with a reader that does not read, past the deadline: $t1 then $t2"
((t1 == t2)) || fail "ticks went on past the deadline without a reader ($t1 -> $t2)"
echo "k_stream: ok"
