#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# u_formats: cprof-dump's other outputs and modes on a real profile.
#   - -f folded: one "comm;root;...;leaf count" line per stack, root first,
#     kernel frames (and only they) suffixed _[k] and at the leaf end; per
#     leaf function and in total the counts are pprof's;
#   - -f top: the header and the top functions (flat%, cum%) are what
#     `go tool pprof -top` shows for the same profile;
#   - -d SECONDS [-F HZ] [-p PID]: cprof-dump sets up and runs the profile
#     itself through /proc/cprof and writes a valid pprof of that length,
#     frequency and process; Ctrl-C (SIGINT) ends it early and keeps it;
#   - bad input (this real stream truncated, corrupted, of another
#     version): the host half, tests/vm/host/u_formats.sh.
# vm-kernels: 6.1
# vm-timeout: 420
set -euo pipefail
# shellcheck source=../lib/kprof.sh
. "$REPO/tests/vm/lib/kprof.sh"

# cprof-dump's work on a real profile, the same on every kernel (the
# module's side is the k_ tests'): one kernel, for make check's time

# shellcheck source=../lib/uprof.sh
. "$REPO/tests/vm/lib/uprof.sh"
dump() { "$CPROF_DUMP" "$@" 2>>"$OUT/dump.err"; }

kload
ctl freq=999 seconds=6
spawn "$WORKLOADS/cpuburn" 600
spawn "$WORKLOADS/readzero" 600
profile "$OUT/p.raw"
stop
dump -i "$OUT/p.raw" -o "$OUT/p.pb.gz" || fail "cprof-dump failed: $(cat "$OUT/dump.err")"
dump -i "$OUT/p.raw" -f folded -o "$OUT/folded.txt" || fail "cprof-dump -f folded failed: $(cat "$OUT/dump.err")"
dump -i "$OUT/p.raw" -f top -n 0 -o "$OUT/top.txt" || fail "cprof-dump -f top failed: $(cat "$OUT/dump.err")"
pp -raw "$OUT/p.pb.gz" >"$OUT/raw.txt" || fail "go tool pprof -raw failed: $(tail -n 3 "$OUT/pprof.err")"
pp -top -sample_index=samples -nodecount=100000 -nodefraction=0 "$OUT/p.pb.gz" >"$OUT/pp-top-samples.txt" ||
	fail "go tool pprof -top failed"
pp -top -nodecount=100000 -nodefraction=0 "$OUT/p.pb.gz" >"$OUT/pp-top.txt" || fail "go tool pprof -top failed"
total=$(rawk '/^Samples:/ { on = 1; next } /^Locations/ { on = 0 } on && $pp_sample_ns ~ /^[0-9]+:$/ { n += $pp_sample_count } END { print n + 0 }' "$OUT/raw.txt")
((total >= 1500)) || fail "only $total samples in 6 s at 999 Hz with 2 CPUs busy"

# ---- folded
bad=$(grep -Evc '^[^ ].* [1-9][0-9]*$' "$OUT/folded.txt" || true)
((bad == 0)) || fail "$bad folded lines are not 'stack count': $(grep -Evm 3 '^[^ ].* [1-9][0-9]*$' "$OUT/folded.txt")"
ftotal=$(awk '{ n += $NF } END { print n + 0 }' "$OUT/folded.txt")
echo "folded: $(wc -l <"$OUT/folded.txt") stacks, $ftotal samples (pprof: $total)"
((ftotal == total)) || fail "folded stacks count $ftotal samples, the pprof $total"
# Root first: comm, then main ... leaf.
read -r chain burnt < <(awk '/^cpuburn;/ { t += $NF; if ($0 ~ /;main;a;b;leaf[123](;[^ ]*_\[k\])* [0-9]+$/) m += $NF } END { print m + 0, t + 0 }' "$OUT/folded.txt")
echo "folded: $chain of $burnt cpuburn samples are cpuburn;...;main;a;b;leafN[;kernel_[k]...]"
((burnt >= 500 && chain * 100 >= burnt * 95)) || fail "cpuburn's folded stacks are not root-first main;a;b;leafN"
# Kernel frames carry _[k] and are the leaf end of the stack.
read -r kern rzt < <(awk '/^readzero;/ { t += $NF; if ($0 ~ /;read_loop;([^;]*;)*do_syscall_64_\[k\];([^;]*;)*vfs_read_\[k\](;| )/) m += $NF } END { print m + 0, t + 0 }' "$OUT/folded.txt")
echo "folded: $kern of $rzt readzero samples are ...;read_loop;...;do_syscall_64_[k];...;vfs_read_[k]..."
((rzt >= 300 && kern * 100 >= rzt * 80)) || fail "readzero's folded stacks do not end in the read system call's kernel frames"
mixed=$(awk '{ sub(/ [0-9]+$/, ""); n = split($0, f, ";"); k = 0
	for (i = 2; i <= n; i++) { if (f[i] ~ /_\[k\]$/) k = 1; else if (k) { print; break } } }' "$OUT/folded.txt" | wc -l)
((mixed == 0)) || fail "$mixed folded stacks have a user frame after a kernel frame"
grep -Eq '(^|;)(do_syscall_64|vfs_read|read_zero)(;| )' "$OUT/folded.txt" && fail "a kernel function without _[k] in the folded stacks"
grep -Eq '(^|;)(main|read_loop|leaf[123])_\[k\](;| )' "$OUT/folded.txt" && fail "a user function marked _[k] in the folded stacks"
# Per leaf function, folded counts = pprof's flat samples.  (Only named
# functions: what could not be symbolized is "file+0xoffset" in folded
# stacks and "[file]" in pprof.)
ident='^[A-Za-z_][A-Za-z0-9_.]*$'
awk '{ n = split($0, f, ";"); sub(/ [0-9]+$/, "", f[n]); sub(/_\[k\]$/, "", f[n]); c[f[n]] += $NF }
	END { for (x in c) if (x ~ ident) print x, c[x] }' ident="$ident" "$OUT/folded.txt" | sort >"$OUT/folded-leaves.txt"
# pprof names an inlined function "f (inline)", folded stacks "f".
rawk 'NF >= top_name && $top_flat_pct ~ /%$/ && $top_flat > 0 { name = $top_name; for (i = top_name + 1; i <= NF; i++) name = name " " $i
	sub(/ \(inline\)$/, "", name); if (name ~ ident) print name, $top_flat }' ident="$ident" "$OUT/pp-top-samples.txt" |
	awk '{ c[$1] += $2 } END { for (x in c) print x, c[x] }' | sort >"$OUT/pp-leaves.txt"
if ! cmp -s "$OUT/folded-leaves.txt" "$OUT/pp-leaves.txt"; then
	diff "$OUT/folded-leaves.txt" "$OUT/pp-leaves.txt" | awk 'NR <= 20'
	fail "samples per leaf function differ between -f folded and pprof's flat"
fi
echo "folded: samples of each of the $(wc -l <"$OUT/folded-leaves.txt") leaf functions match pprof's flat"

# ---- top
hdr() { grep -m 1 '^Duration:' "$1"; }
echo "top: $(hdr "$OUT/top.txt")"
echo "pprof: $(hdr "$OUT/pp-top.txt")"
# Same duration and same share of it; pprof may print the total in another unit.
[[ $(hdr "$OUT/top.txt" | awk '{ print $2, $NF }') == "$(hdr "$OUT/pp-top.txt" | awk '{ print $2, $NF }')" ]] ||
	fail "-f top header '$(hdr "$OUT/top.txt")', pprof's '$(hdr "$OUT/pp-top.txt")'"
# "name flat% cum%" of the first 10 rows, against pprof's row of that name.
rows() { rawk '/^ +flat +flat%/ { on = 1; next } on && NF >= top_name { name = $top_name; for (i = top_name + 1; i <= NF; i++) name = name " " $i
	sub(/ \(inline\)$/, "", name); print name, $top_flat_pct, $top_cum_pct }' "$1"; }
rows "$OUT/top.txt" | awk -v ident="$ident" '$1 ~ ident' | awk 'NR <= 10' >"$OUT/top10.txt"
rows "$OUT/pp-top.txt" | awk -v ident="$ident" '$1 ~ ident' >"$OUT/pp-rows.txt"
((($(wc -l <"$OUT/top10.txt")) == 10)) || fail "-f top shows $(wc -l <"$OUT/top10.txt") rows: $(cat "$OUT/top.txt")"
while read -r name flat cum; do
	want=$(awk -v n="$name" '$1 == n { print $2, $3; exit }' "$OUT/pp-rows.txt")
	[[ "$flat $cum" == "$want" ]] || fail "-f top: $name $flat flat $cum cum; pprof -top: ${want:-no such row}"
done <"$OUT/top10.txt"
first=$(head -n 1 "$OUT/top10.txt" | cut -d' ' -f1)
[[ $first == "$(head -n 1 "$OUT/pp-rows.txt" | cut -d' ' -f1)" ]] || fail "-f top's first row is $first, pprof's $(head -n 1 "$OUT/pp-rows.txt")"
grep -qE ' leaf3$' "$OUT/top10.txt" || grep -qE '^leaf3 ' "$OUT/top10.txt" || fail "leaf3 is not in -f top's first 10 rows"
echo "top: the first 10 rows ($(cut -d' ' -f1 "$OUT/top10.txt" | tr '\n' ' ')) agree with pprof -top"

# ---- -d: cprof-dump runs the profile
spawn "$WORKLOADS/cpuburn" 600
spawn "$WORKLOADS/readzero" 600
start=$(date +%s%N)
dump -d 3 -F 499 -o "$OUT/d.pb.gz" || fail "cprof-dump -d 3 -F 499 failed: $(tail -n 3 "$OUT/dump.err")"
ms=$((($(date +%s%N) - start) / 1000000))
pp -raw "$OUT/d.pb.gz" >"$OUT/d-raw.txt" || fail "the -d profile is not a valid pprof: $(tail -n 3 "$OUT/pprof.err")"
dur=$(awk '$1 == "Duration:" { print $2 }' "$OUT/d-raw.txt")
period=$(awk '$1 == "Period:" { print $2 }' "$OUT/d-raw.txt")
dsamples=$(rawk '/^Samples:/ { on = 1; next } /^Locations/ { on = 0 } on && $pp_sample_ns ~ /^[0-9]+:$/ { n += $pp_sample_count } END { print n + 0 }' "$OUT/d-raw.txt")
echo "-d 3 -F 499: took $ms ms, Duration $dur s, Period $period, $dsamples samples"
((period == 2004008)) || fail "-F 499 gave period $period"
awk -v d="$dur" 'BEGIN { exit !(d >= 2.99 && d < 4) }' || fail "-d 3 gave a ${dur}s profile"
((ms >= 2900)) || fail "-d 3 returned after $ms ms"
((dsamples >= 300)) || fail "only $dsamples samples in 3 s at 499 Hz"
grep -qE ' leaf3 ' "$OUT/d-raw.txt" || fail "the -d profile has no leaf3"
[[ $(awk -F= '$1 == "freq" { print $2 }' /proc/cprof/ctl) == 499 ]] || fail "ctl freq is not 499 after -F 499"
[[ $(awk -F= '$1 == "seconds" { print $2 }' /proc/cprof/ctl) == 3 ]] || fail "ctl seconds is not 3 after -d 3"
# -p: only that process.
burn=${bg[0]}
dump -d 2 -p "$burn" -f folded -o "$OUT/d-pid.txt" || fail "cprof-dump -d 2 -p failed: $(tail -n 3 "$OUT/dump.err")"
others=$(grep -vc '^cpuburn;' "$OUT/d-pid.txt" || true)
echo "-d 2 -p $burn -f folded: $(awk '{ n += $NF } END { print n + 0 }' "$OUT/d-pid.txt") samples, $others stacks not cpuburn's"
((others == 0)) || fail "-p $burn: stacks of other processes: $(grep -v '^cpuburn;' "$OUT/d-pid.txt" | awk 'NR <= 3')"
grep -q ';leaf3 ' "$OUT/d-pid.txt" || fail "-p $burn: no leaf3"
# SIGINT ends the profile early; what was collected is written.
"$CPROF_DUMP" -d 60 -p 0 -o "$OUT/int.pb.gz" 2>"$OUT/int.err" &
dumper=$!
wait_profiling || fail "cprof-dump -d 60 did not start a profile in 10 s"
sleep 3
start=$(date +%s%N)
kill -INT "$dumper"
rc=0
wait "$dumper" || rc=$?
ms=$((($(date +%s%N) - start) / 1000000))
stop
pp -raw "$OUT/int.pb.gz" >"$OUT/int-raw.txt" || fail "the interrupted -d profile is not a valid pprof: $(cat "$OUT/int.err")"
dur=$(awk '$1 == "Duration:" { print $2 }' "$OUT/int-raw.txt")
# When SIGINT came, counted from the profile's start (its Time).
ptime=$(sed -n 's/^Time: \(.*\) [A-Z][A-Z]*$/\1/p' "$OUT/int-raw.txt")
sig_at=$(awk -v s="$start" -v t="$(date -d "$ptime" +%s%N)" 'BEGIN { printf "%.2f", (s - t) / 1e9 }')
echo "-d 60, SIGINT ${sig_at}s into the profile: exit $rc after $ms ms, Duration $dur s (stopped $(awk -v d="$dur" -v s="$sig_at" 'BEGIN { printf "%.2f", d - s }')s after SIGINT), $(grep -c ' leaf[123] ' "$OUT/int-raw.txt") leaf locations"
((rc == 0)) || fail "cprof-dump -d exited $rc on SIGINT: $(cat "$OUT/int.err")"
# (Well under the 60 s the profile would run without the signal: the rest
# is symbolizing and writing, which a host running other VMs slows down.)
((ms < 45000)) || fail "cprof-dump took $ms ms to finish after SIGINT"
# It ends soon after the signal, however late a loaded host delivered it.
awk -v d="$dur" -v s="$sig_at" 'BEGIN { exit !(d >= 2.9 && d < 50 && d - s < 3) }' ||
	fail "the interrupted profile lasted ${dur}s, SIGINT came at ${sig_at}s"
grep -q '^Comment: .*stopped early' "$OUT/int-raw.txt" || fail "the interrupted profile does not say it was stopped early"
grep -qE ' leaf3 ' "$OUT/int-raw.txt" || fail "the interrupted profile has no leaf3"

echo "u_formats: ok"
