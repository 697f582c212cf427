#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# k_ctl: /proc/cprof/ctl takes good settings and rejects bad ones whole:
# every bad write fails with EINVAL (EBUSY while profiling) and the settings
# read back unchanged.  Module parameters are checked the same way.
# vm-kernels: 6.12 6.1-rt
# vm-timeout: 120
set -euo pipefail
# shellcheck source=../lib/kprof.sh
. "$REPO/tests/vm/lib/kprof.sh"

# write TEXT [OFFSET]: one write(2) of TEXT (at OFFSET); prints "ok N" or
# the errno text.
write() {
	perl -e 'open(my $f, ">", "/proc/cprof/ctl") or die "open: $!\n";
		sysseek($f, $ARGV[1], 0) if $ARGV[1];
		my $r = syswrite($f, $ARGV[0]);
		print defined $r ? "ok $r\n" : "$!\n";' -- "$1" "${2:-0}"
}

for bad in freq=0 freq=100001 depth=0 depth=128 seconds=86401 budget=0 buffer_kb=100 buffer_kb=32; do
	if insmod "$CPROF_KO" "$bad" 2>/dev/null; then
		rmmod cprof
		fail "insmod with $bad succeeded"
	fi
done
kload freq=77 seconds=5
before=$(cat /proc/cprof/ctl)
grep -qx freq=77 <<<"$before" || fail "module parameter freq=77 not in ctl"

long=$(printf 'freq=%0300d' 5)
big=$(printf 'idle=1\n%.0s' $(seq 1 700))
bad_writes=(
	"" $'\n' "freq=-1" "freq=0" "freq=100001" "freq=99999999999999999999"
	"freq=abc" "freq=12abc" "freq= 5" "freq=" "=5" "freq" "bogus=1" "FREQ=5"
	"depth=128" "depth=0" "seconds=-1" "seconds=86401" "mode=fast" "mode="
	"idle=2" "idle=yes" "cpus=" "cpus=9999" "cpus=0-" "cpus=a" "pid=-5"
	"pid=4194305" "budget=101" "unwind_mb=4097" "unwind_mb=-1"
	"accesses=0" "accesses=4097" "offcpu_depth=0" "offcpu_depth=128"
	"ustack=32776" "ustack=12" "ustack=-8" "kind=off" "kind=" "kind=CPU" "kind=thread" "$long" $'freq=50\nbogus=1' $'freq=50\n\nseconds=5'
	$'freq=50\nfreq=0' "$big" "stop=0" "stop=yes" $'stop=1\nfreq=50'
)
# One perl for all of them (starting a program is what costs in a slow
# VM): each write, then ctl read back, one "errno-text|settings" line per
# write, newlines in the settings as ";".
mapfile -t results < <(perl -e '
	sub ctl { open(my $f, "<", "/proc/cprof/ctl") or die "read ctl: $!\n";
		local $/; my $t = <$f>; $t =~ s/\n$//; $t =~ s/\n/;/g; return $t; }
	for my $w (@ARGV) {
		my ($off, $text) = split(/:/, $w, 2);
		open(my $f, ">", "/proc/cprof/ctl") or die "open: $!\n";
		sysseek($f, $off, 0) if $off;
		my $r = syswrite($f, $text);
		close($f);
		print((defined $r ? "ok $r" : "$!") . "|" . ctl() . "\n");
	}' -- "${bad_writes[@]/#/0:}" "3:freq=50")
before=${before//$'\n'/;}
bad_writes+=("freq=50 at offset 3")
((${#results[@]} == ${#bad_writes[@]})) || fail "${#results[@]} results for ${#bad_writes[@]} writes"
for i in "${!bad_writes[@]}"; do
	w=${bad_writes[i]}
	r=${results[i]%%|*}
	[[ $r == "Invalid argument" ]] || fail "bad write #$((i + 1)) '${w:0:40}' gave '$r', want EINVAL"
	[[ ${results[i]#*|} == "$before" ]] || fail "bad write #$((i + 1)) '${w:0:40}' changed the settings"
done
echo "$((${#bad_writes[@]} - 1)) bad writes + 1 at an offset rejected, settings unchanged"

# Good writes, with and without the final newline.
r=$(write $'freq=123\nseconds=2\ndepth=10\ncpus=0\nmode=user\nidle=1\nbudget=50\npid=1\nunwind_mb=16\nustack=4096\nkind=wall\naccesses=4096\noffcpu_depth=1\n')
[[ $r == ok* ]] || fail "good write rejected: $r"
r=$(write "cpus=0-1")
[[ $r == ok* ]] || fail "good write without newline rejected: $r"
want=$'freq=123\nseconds=2\ndepth=10\npid=1\ncpus=0-1\nmode=user\nidle=1\nbudget=50\nunwind_mb=16\nustack=4096\nkind=wall\naccesses=4096\noffcpu_depth=1\nheap_rate=524288\nheap_kb=1024\nheap_malloc=0x0\nheap_calloc=0x0\nheap_realloc=0x0\nheap_posix_memalign=0x0\nheap_free=0x0'
[[ $(cat /proc/cprof/ctl) == "$want" ]] || fail "settings read back as: $(cat /proc/cprof/ctl)"
r=$(write "kind=threads")
[[ $r == ok* && $(grep '^kind=' /proc/cprof/ctl) == kind=threads ]] ||
	fail "kind=threads: '$r', read back as $(grep '^kind=' /proc/cprof/ctl)"
write $'pid=0\ncpus=all\nmode=both\nidle=0\nseconds=3\nkind=cpu\naccesses=256\noffcpu_depth=32' >/dev/null
after=$(cat /proc/cprof/ctl)

r=$(write "stop=1")
[[ $r == ok* ]] || fail "stop=1 with no profile running gave '$r', want a no-op"
[[ $(cat /proc/cprof/ctl) == "$after" ]] || fail "stop=1 changed the settings"

# While profiling: EBUSY, nothing changes.
cat /proc/cprof/profile >/dev/null &
reader=$!
wait_profiling || fail "the profile did not start"
r=$(write "freq=50")
[[ $r == "Device or resource busy" ]] || fail "write while profiling gave '$r', want EBUSY"
[[ $(cat /proc/cprof/ctl) == "$after" ]] || fail "write while profiling changed the settings"
wait "$reader"
r=$(write "freq=50")
[[ $r == ok* ]] || fail "write after the profile ended rejected: $r"
echo "k_ctl: ok"
