#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# b_soak: `cprof-dump --every 1 --keep 120` for SOAK_MINUTES (default 30)
# while processes start and exit throughout (a new shortlived, 0.05 s of
# CPU, about every 0.3 s, each its own pid and mappings, every tenth a
# new file deleted when it exits; cpuburn in the background).  Once a minute: cprof-dump's RSS, open files and the files
# in the directory.  At the end: RSS and fds flat after the first minutes
# (RSS at the end within 8 MiB of minute 3's and never 16 MiB above it,
# at most 32 files open), every window
# of the last 120 s present (named by consecutive seconds) and bounded
# (each under 1 MiB), the module's unwind tables no more than at minute 3
# (the deleted programs' removed by the sweep), at most 1 % of the samples
# outside their window, the run's summary line.  A benchmark (make bench):
# docs/BENCHMARKS.md keeps its figures; $OUT/results has them as key value
# lines (tests/bench/summary.sh).
# vm-timeout: 2400
set -euo pipefail
# shellcheck source=../lib/kprof.sh
. "$REPO/tests/vm/lib/kprof.sh"

# shellcheck source=../lib/uprof.sh
. "$REPO/tests/vm/lib/uprof.sh"

minutes=${SOAK_MINUTES:-30}
kload
dir=$(mktemp -d)
spawn "$WORKLOADS/cpuburn" 86400
# a copy: the host's build may change during half an hour
bin=$(mktemp -d)/cprof-dump
cp "$CPROF_DUMP" "$bin"
"$bin" --every 1 --keep 120 -o "$dir" 2>"$OUT/soak.err" &
dump=$!
# processes that start and exit all the time; every tenth a new copy of
# the program, deleted when it exits (a new file for the table loader,
# whose table the sweep must then remove, as after an upgrade)
churn_dir=$(mktemp -d)
(
	n=0
	while :; do
		n=$((n + 1))
		if ((n % 10)); then
			"$WORKLOADS/shortlived" 0.05 >/dev/null
		else
			cp "$WORKLOADS/shortlived" "$churn_dir/sl$n"
			"$churn_dir/sl$n" 0.05 >/dev/null
			rm -f "$churn_dir/sl$n"
		fi
		sleep 0.25
	done
) &
churn=$!
sample() {
	echo "$1 $(awk '/^VmRSS/ { print $2 }' /proc/$dump/status) $(find /proc/$dump/fd -mindepth 1 | wc -l) $(find "$dir" -name 'cprof-*' | wc -l) $(stat_of unwind_tables) $(stat_of unwind_bytes)"
}
echo "minute rss_kB fds files unwind_tables unwind_bytes" | tee "$OUT/soak.tsv"
for m in $(seq 1 "$minutes"); do
	sleep 60
	kill -0 "$dump" || fail "cprof-dump died: $(tail -n 3 "$OUT/soak.err")"
	sample "$m" | tee -a "$OUT/soak.tsv"
done
kill "$churn"
wait "$churn" 2>/dev/null || true
kill -INT "$dump"
wait "$dump" || fail "cprof-dump --every exited with $?: $(tail -n 3 "$OUT/soak.err")"
stop
tail -n 1 "$OUT/soak.err"
windows=$(grep -c ': wrote ' "$OUT/soak.err")
lost=$(grep -c 'lost' "$OUT/soak.err" || true)
echo "windows written: $windows in $minutes min; lines saying lost: $lost"
((windows >= minutes * 60 - 5)) || fail "only $windows windows in $minutes minutes"
((lost == 0)) || fail "windows were lost: $(grep lost "$OUT/soak.err" | head -n 3)"
# samples outside their window: the reader reads on while windows are written
late=$(sed -n 's/.*warning: \([0-9]*\) samples arrived after their window was written.*/\1/p' "$OUT/soak.err")
all=$(sed -n 's/^cprof-dump: [0-9]* windows of 1 s, \([0-9]*\) samples.*/\1/p' "$OUT/soak.err")
echo "samples after their window was written: ${late:-0} of ${all:-?}"
printf '%s\n' "minutes $minutes" "windows $windows" "samples ${all:-0}" "late ${late:-0}" >"$OUT/results"
[[ -n $all ]] || fail "no summary line counts the samples"
((${late:-0} * 100 <= all)) || fail "${late} of $all samples arrived after their window was written (over 1 %)"
# the files kept: consecutive seconds, each bounded
mapfile -t files < <(find "$dir" -name 'cprof-*.pb.gz' -printf '%f\n' | sort)
prev=
gaps=0
big=0
for f in "${files[@]}"; do
	t=$(date -u -d "$(sed -E 's/cprof-([0-9]{4})([0-9]{2})([0-9]{2})T([0-9]{2})([0-9]{2})([0-9]{2})Z.*/\1-\2-\3 \4:\5:\6/' <<<"$f")" +%s)
	[[ -n $prev ]] && ((t != prev + 1)) && gaps=$((gaps + 1))
	prev=$t
	(($(stat -c %s "$dir/$f") < 1048576)) || big=$((big + 1))
done
largest=$(find "$dir" -name 'cprof-*.pb.gz' -printf '%s\n' | sort -n | tail -n 1)
echo "files kept: ${#files[@]}, gaps between them: $gaps, over 1 MiB: $big, largest $largest bytes"
((${#files[@]} == 120)) || fail "--keep 120 left ${#files[@]} files"
((gaps == 0)) || fail "$gaps gaps between the windows kept"
((big == 0)) || fail "$big windows over 1 MiB"
# from minute 3 on: RSS and fds within bounds (a window being symbolized
# holds a few files open for a moment)
read -r _ rss3 fds3 _ < <(sed -n 4p "$OUT/soak.tsv")
read -r _ rssn fdsn _ < <(tail -n 1 "$OUT/soak.tsv")
read -r rssmax fdsmax < <(awk 'NR > 3 { if ($2 > r) r = $2; if ($3 > f) f = $3 } END { print r, f }' "$OUT/soak.tsv")
echo "minute 3: $rss3 kB, $fds3 fds; minute $minutes: $rssn kB, $fdsn fds; the most from minute 3 on: $rssmax kB, $fdsmax fds"
printf '%s\n' "rss3_kb $rss3" "rss_end_kb $rssn" "rss_max_kb $rssmax" >>"$OUT/results"
((rssn - rss3 < 8192)) || fail "RSS grew from $rss3 to $rssn kB"
((rssmax - rss3 < 16384)) || fail "RSS reached $rssmax kB (minute 3: $rss3)"
((fdsmax <= 32)) || fail "up to $fdsmax files open"
# the module's tables: a new program file every 3 s or so, each deleted,
# some 20 a minute; the sweep runs once a minute, so the count swings by
# about that, and without it would grow by some 540 in 27 minutes
read -r _ _ _ _ tab3 _ < <(sed -n 4p "$OUT/soak.tsv")
read -r _ _ _ _ tabn _ < <(tail -n 1 "$OUT/soak.tsv")
echo "unwind tables in the module: $tab3 at minute 3, $tabn at minute $minutes"
((tabn <= tab3 + 40)) || fail "the module's tables grew from $tab3 to $tabn: the deleted programs' were not removed"
echo "b_soak: ok"
