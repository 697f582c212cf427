#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# u_windows: continuous profiles and cgroup labels.
#   - `cprof-dump --every 2 -d 12` writes 6 pprof files, one per 2 s
#     window: each starts exactly 2 s after the one before (pprof's
#     time_nanos, to the nanosecond), so there is no gap or overlap, and
#     their samples add up to what the module's END record counts for the
#     profile;
#   - windows of 1 s converted more slowly than they come (kernel symbols
#     that take 1.5 s to read: --kallsyms a FIFO), -F 999: the reader reads
#     on meanwhile, so no sample arrives after its window was written, and
#     the windows hold what the END record counts;
#   - cpuburn runs in its own cgroup (/sys/fs/cgroup/work): its samples carry
#     the pprof label cgroup=/work, and `-f folded --cgroup` roots its stacks
#     at cgroup:/work;
#   - open-ended (`--every 2 --keep 2`), SIGINT finishes the window being
#     collected: the files written are whole, only the newest 2 remain;
#   - a full filesystem (a tmpfs filled during the run): the windows due
#     meanwhile are lost, one line each, and the run goes on: later windows
#     are written, --keep rotates, the exit status is 1.
# Runs on 6.1 only: windows are cprof-dump's, the same on every kernel.
# vm-kernels: 6.1
# vm-timeout: 300
set -euo pipefail
# shellcheck source=../lib/kprof.sh
. "$REPO/tests/vm/lib/kprof.sh"

# shellcheck source=../lib/uprof.sh
. "$REPO/tests/vm/lib/uprof.sh"

cg=/sys/fs/cgroup
[[ -e $cg/cgroup.procs ]] || mount -t cgroup2 none "$cg" || fail "cannot mount cgroup2"
mkdir -p "$cg/work"
kload
spawn "$WORKLOADS/cpuburn" 6000
echo "${bg[0]}" >"$cg/work/cgroup.procs" || fail "cannot move cpuburn into $cg/work"

mkdir "$OUT/win"
"$CPROF_DUMP" --every 2 -d 12 -F 499 -o "$OUT/win" 2>"$OUT/win.err" ||
	fail "cprof-dump --every failed: $(tail -n 3 "$OUT/win.err")"
sed 's/^/  /' "$OUT/win.err"
mapfile -t files < <(ls "$OUT"/win/cprof-*Z.pb.gz)
((${#files[@]} == 6)) || fail "${#files[@]} windows written, not 6"
prev=
total=0
for f in "${files[@]}"; do
	pp -raw "$f" >"$f.raw" || fail "go tool pprof -raw $f failed: $(tail -n 3 "$OUT/pprof.err")"
	# "Time: 2026-11-23 20:00:00.123456789 +0000 UTC": ns since the epoch
	t=$(sed -n 's/^Time: //p' "$f.raw")
	ns=$(date -d "${t% *}" +%s%N)
	n=$(rawk '/^Samples:/ { on = 1; getline; next } /^Locations/ { on = 0 } on && $pp_sample_count ~ /^[0-9]+$/ { s += $pp_sample_count } END { print s + 0 }' "$f.raw")
	total=$((total + n))
	if [[ -n $prev ]]; then
		((ns - prev == 2000000000)) || fail "$f starts $((ns - prev)) ns after the window before, not 2 s"
	fi
	prev=$ns
done
end=$(sed -n "s/.*the module's END record counts \([0-9]*\).*/\1/p" "$OUT/win.err")
echo "6 windows, each 2 s after the last; their samples: $total; the END record: $end"
if [[ -z $end ]] || ((total != end)); then
	fail "the windows hold $total samples, the module counted $end"
fi
((total > 0)) || fail "no samples"
late() { sed -n 's/.*warning: \([0-9]*\) samples arrived after their window was written.*/\1/p' "$1"; }
[[ -z $(late "$OUT/win.err") ]] || fail "$(late "$OUT/win.err") samples arrived after their window was written"

# Windows of 1 s, each converted in 1.5 s: /proc/kallsyms through a FIFO
# whose writer waits that long for each reader.  The reader reads on while
# they are written.
mkdir "$OUT/fast"
fifo=$(mktemp -d)/kallsyms	# $OUT takes no FIFO
mkfifo "$fifo"
while :; do { sleep 1.5; cat /proc/kallsyms; } >"$fifo"; sleep 0.2; done &
slowsyms=$!
"$CPROF_DUMP" --every 1 -d 4 -F 999 --kallsyms "$fifo" -o "$OUT/fast" 2>"$OUT/fast.err" ||
	fail "cprof-dump --every 1 failed: $(tail -n 3 "$OUT/fast.err")"
kill "$slowsyms"
sed 's/^/  /' "$OUT/fast.err"
n=$(sed -n 's/^cprof-dump: [0-9]* windows of 1 s, \([0-9]*\) samples.*/\1/p' "$OUT/fast.err")
end=$(sed -n "s/.*the module's END record counts \([0-9]*\).*/\1/p" "$OUT/fast.err")
echo "windows of 1 s: $(grep -c '^cprof-dump: wrote' "$OUT/fast.err") written, $n samples (END: $end), late: $(late "$OUT/fast.err")"
[[ -z $(late "$OUT/fast.err") ]] || fail "$(late "$OUT/fast.err") of $n samples arrived after their window was written"
[[ -n $end && $n == "$end" ]] || fail "the windows of 1 s hold $n samples, the module counted $end"

# The cgroup label.
pp -tags "${files[5]}" >"$OUT/tags.txt" || fail "go tool pprof -tags failed"
grep -q '/work' "$OUT/tags.txt" || fail "no cgroup /work label: $(cat "$OUT/tags.txt")"
echo "labels: $(grep -A3 'cgroup' "$OUT/tags.txt" | tr -s ' \n' ' ')"
"$CPROF_DUMP" -d 2 -F 499 -f folded --cgroup -o "$OUT/cg.folded" 2>"$OUT/cg.err" || fail "cprof-dump -f folded --cgroup failed: $(cat "$OUT/cg.err")"
work=$(awk '/^cgroup:\/work;cpuburn;/ { s += $NF } END { print s + 0 }' "$OUT/cg.folded")
all=$(awk '{ s += $NF } END { print s + 0 }' "$OUT/cg.folded")
echo "folded --cgroup: $work of $all samples under cgroup:/work;cpuburn"
((work * 2 > all)) || fail "cpuburn's samples are not under cgroup:/work: $(head -n 3 "$OUT/cg.folded")"

# Open-ended, SIGINT, --keep 2.
mkdir "$OUT/keep"
"$CPROF_DUMP" --every 2 --keep 2 -F 499 -o "$OUT/keep" 2>"$OUT/keep.err" &
pid=$!
for _ in $(seq 1 300); do
	(($(grep -c '^cprof-dump: wrote' "$OUT/keep.err") >= 3)) && break
	sleep 0.1
done
kill -INT "$pid"
wait "$pid" || fail "cprof-dump --every exited with $? on SIGINT: $(tail -n 3 "$OUT/keep.err")"
written=$(grep -c '^cprof-dump: wrote' "$OUT/keep.err")
mapfile -t kept < <(ls "$OUT"/keep/)
echo "open-ended: $written windows written, kept: ${kept[*]}"
((written >= 4)) || fail "SIGINT did not finish the window being collected ($written written)"
((${#kept[@]} == 2)) || fail "--keep 2 left ${#kept[@]} files"
for f in "${kept[@]}"; do
	pp -raw "$OUT/keep/$f" >/dev/null || fail "$f is not a whole profile"
done

# A full filesystem: a 256 KiB tmpfs, filled while windows 2 and 3 are
# due.  Those are lost (one line each), the run goes on, later windows are
# written and --keep rotates; the exit status says windows were lost.
mkdir "$OUT/full"
mount -t tmpfs -o size=256k none "$OUT/full" || fail "cannot mount a tmpfs"
"$CPROF_DUMP" --every 1 -d 8 --keep 3 -F 499 -o "$OUT/full" 2>"$OUT/full.err" &
pid=$!
for _ in $(seq 1 300); do
	(($(grep -c '^cprof-dump: wrote' "$OUT/full.err") >= 2)) && break
	sleep 0.1
done
dd if=/dev/zero of="$OUT/full/filler" bs=4k 2>/dev/null || true
for _ in $(seq 1 300); do
	(($(grep -c 'window [0-9]* lost' "$OUT/full.err") >= 2)) && break
	sleep 0.1
done
rm -f "$OUT/full/filler"
rc=0
wait "$pid" || rc=$?
sed 's/^/  /' "$OUT/full.err"
lost=$(grep -c 'window [0-9]* lost' "$OUT/full.err" || true)
written=$(grep -c '^cprof-dump: wrote' "$OUT/full.err" || true)
mapfile -t kept < <(ls "$OUT"/full/)
echo "a full disk: $lost windows lost, $written written, kept: ${kept[*]}, exit status $rc"
((lost >= 1)) || fail "no window was lost on a full tmpfs"
((written + lost == 8)) || fail "$written written and $lost lost: not the 8 windows of the run"
((rc == 1)) || fail "cprof-dump --every exited with $rc after losing windows, not 1"
grep -q 'windows (.* samples) could not be written' "$OUT/full.err" || fail "no line at the end counts the lost windows"
((${#kept[@]} == 3)) || fail "--keep 3 left ${#kept[@]} files after the disk was full"
for f in "${kept[@]}"; do
	pp -raw "$OUT/full/$f" >/dev/null || fail "$f is not a whole profile"
done
umount "$OUT/full"
stop
echo "u_windows: ok"
