#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# u_pprof: a real profile, through cprof-dump, read by `go tool pprof`.
# cpuburn and readzero run while /proc/cprof/profile is read; cprof-dump
# turns the stream into a pprof profile, and pprof shows what a user looks
# for:
#   - cpuburn's leaves leaf1:leaf2:leaf3 split 1:2:4 (each within 5 points
#     of 14.3%, 28.6%, 57.1% of the three), under b, a and main (-top,
#     -traces);
#   - readzero's samples run through named kernel functions (do_syscall_64,
#     ksys_read, vfs_read) of the [kernel.kallsyms] mapping, under the user
#     frames read_loop and main;
#   - labels pid, tid, comm and cpu with the workloads' real values (-tags);
#   - sample types samples/count and cpu/nanoseconds, period 1e9/freq, the
#     profile's start time and duration;
#   - the total sample count is what /proc/cprof/stats counted for this
#     profile (samples + lost) and what the stream's END record says.
# Runs on 6.1 only (make check's time): the pprof is cprof-dump's, and the
# module's samples are k_stacks' on every kernel.
# vm-kernels: 6.1
# vm-timeout: 300
set -euo pipefail
# shellcheck source=../lib/kprof.sh
. "$REPO/tests/vm/lib/kprof.sh"

# shellcheck source=../lib/uprof.sh
. "$REPO/tests/vm/lib/uprof.sh"

FREQ=999
SECS=8
kload
ctl freq=$FREQ seconds=$SECS
s0=$(stat_of samples)
l0=$(stat_of lost)
spawn "$WORKLOADS/cpuburn" 600
burn=$!
spawn "$WORKLOADS/readzero" 600
rz=$!
t0=$(date +%s%N)
profile "$OUT/p.raw"
t1=$(date +%s%N)
s1=$(stat_of samples)
l1=$(stat_of lost)
stop
samples=$((s1 - s0))
lost=$((l1 - l0))
read -r end_dur end_samples end_lost < <(rawk '$1 == "E" { print $E_duration_ns, $E_samples, $E_lost }' "$OUT/p.raw.txt")
echo "stats: $samples samples, $lost lost; END: $end_samples samples, $end_lost lost, duration $end_dur ns"

start=$(date +%s%N)
"$CPROF_DUMP" -i "$OUT/p.raw" -o "$OUT/p.pb.gz" 2>"$OUT/dump.err" ||
	fail "cprof-dump failed: $(cat "$OUT/dump.err")"
echo "cprof-dump: $((($(date +%s%N) - start) / 1000000)) ms, $(stat -c %s "$OUT/p.raw") byte stream -> $(stat -c %s "$OUT/p.pb.gz") byte pprof"
sed 's/^/  cprof-dump: /' "$OUT/dump.err"

pp -raw "$OUT/p.pb.gz" >"$OUT/raw.txt" || fail "go tool pprof -raw cannot read the profile: $(tail -n 3 "$OUT/pprof.err")"
# -top rows as "flat cum name", counts.
pp -top -sample_index=samples -nodecount=100000 -nodefraction=0 -edgefraction=0 \
	"$OUT/p.pb.gz" >"$OUT/top.txt" || fail "go tool pprof -top failed"
cum_of() { rawk -v f="$1" '$top_name == f && NF == top_name { print $top_cum; found = 1 } END { if (!found) print 0 }' "$OUT/top.txt"; }

# ---- header: sample types, period, time, duration
grep -qx 'samples/count cpu/nanoseconds' "$OUT/raw.txt" || fail "sample types are not samples/count cpu/nanoseconds: $(sed -n '/^Samples:/{n;p}' "$OUT/raw.txt")"
grep -qx 'PeriodType: cpu nanoseconds' "$OUT/raw.txt" || fail "period type: $(grep PeriodType "$OUT/raw.txt")"
period=$(rawk '$1 == "H" { print $H_period_ns }' "$OUT/p.raw.txt")
grep -qx "Period: $period" "$OUT/raw.txt" || fail "period: $(grep '^Period:' "$OUT/raw.txt"), the stream's is $period"
((period == 1000000000 / FREQ)) || fail "the stream's period $period is not 1e9/$FREQ"
# Go prints the duration as "%.4v" ("8.05" for 8.05s) and the time as
# "2024-05-01 10:00:00.123456789 +0000 UTC".
dur=$(awk '$1 == "Duration:" { print $2 }' "$OUT/raw.txt")
ptime=$(sed -n 's/^Time: \(.*\) [A-Z][A-Z]*$/\1/p' "$OUT/raw.txt")
ptime_ns=$(date -d "$ptime" +%s%N) || fail "cannot parse the profile's time '$ptime'"
echo "pprof: Period $period, Duration $dur s (END says $end_dur ns), Time $ptime ($(((ptime_ns - t0) / 1000000)) ms after the reader was started, $(((t1 - end_dur - ptime_ns) / 1000000)) ms before its end less the duration)"
awk -v d="$dur" -v e="$end_dur" 'BEGIN { exit !(d * 1e9 - e < 0.02e9 && e - d * 1e9 < 0.02e9) }' ||
	fail "pprof duration ${dur}s is not the profile's (${end_dur} ns)"
((end_dur >= SECS * 1000000000 - 50000000 && end_dur < (SECS + 2) * 1000000000)) ||
	fail "the profile lasted $end_dur ns for seconds=$SECS"
# It started after the reader was started and before the reader's end less
# the profile's length (with 1 s for the clocks' differences).
((ptime_ns > t0 - 1000000000 && ptime_ns < t1 - end_dur + 1000000000)) ||
	fail "profile time $ptime is not when the profile was started"

# ---- totals: every sample the module counted, lost ones visibly
total=$(rawk '/^Samples:/ { on = 1; next } /^Locations/ { on = 0 } on && $pp_sample_ns ~ /^[0-9]+:$/ { n += $pp_sample_count } END { print n + 0 }' "$OUT/raw.txt")
lostloc=$(rawk '/^Locations/ { on = 1; next } /^Mappings/ { on = 0 } on && /\[lost samples\]/ { sub(":", "", $pp_loc_id); print $pp_loc_id }' "$OUT/raw.txt")
echo "pprof: $total samples in all (stats: $samples + $lost lost)"
((total == samples + lost)) || fail "the pprof holds $total samples, /proc/cprof/stats counted $samples + $lost lost"
((end_samples == samples && end_lost == lost)) || fail "END record ($end_samples + $end_lost lost) disagrees with stats ($samples + $lost)"
if ((lost > 0)); then
	[[ -n $lostloc ]] || fail "$lost samples lost but no [lost samples] location"
fi
((samples >= 2000)) || fail "only $samples samples in ${SECS}s at $FREQ Hz on 2 busy CPUs"

# ---- cpuburn: the 1:2:4 split
read -r l1 l2 l3 <<<"$(cum_of leaf1) $(cum_of leaf2) $(cum_of leaf3)"
leaves=$((l1 + l2 + l3))
echo "cpuburn: leaf1 $l1 leaf2 $l2 leaf3 $l3 samples (main $(cum_of main), a $(cum_of a), b $(cum_of b))"
((leaves >= 800)) || fail "only $leaves samples in cpuburn's leaves: too few to judge the split"
awk -v a="$l1" -v b="$l2" -v c="$l3" 'BEGIN {
	t = a + b + c
	printf "cpuburn: split %.1f%% %.1f%% %.1f%% (want 14.3 28.6 57.1 +-5)\n", 100 * a / t, 100 * b / t, 100 * c / t
	d1 = 100 * a / t - 100 / 7; d2 = 100 * b / t - 200 / 7; d3 = 100 * c / t - 400 / 7
	exit !(d1 * d1 < 25 && d2 * d2 < 25 && d3 * d3 < 25)
}' || fail "cpuburn's leaves are not split 1:2:4"
for f in b a main; do
	(($(cum_of "$f") >= leaves)) || fail "$f's cum ($(cum_of "$f")) is below its leaves' ($leaves): stacks do not reach it"
done

# -traces, one line per sample: count TAB comm TAB pid TAB tid TAB cpu TAB
# stack (frames leaf first, joined with ";").
pp -traces -sample_index=samples "$OUT/p.pb.gz" >"$OUT/traces.txt" || fail "go tool pprof -traces failed"
traces_tsv "$OUT/traces.txt" >"$OUT/traces.tsv"
# traces_match COMM RE: "matching total" sample counts of COMM's samples,
# matching: their stack matches RE.
traces_match() {
	rawk -F '\t' -v c="$1" -v re="$2" '$trace_comm == c { t += $trace_count; if ($trace_stack ~ re) m += $trace_count }
		END { print m + 0, t + 0 }' "$OUT/traces.tsv"
}
read -r chain burnt < <(traces_match cpuburn '(^|;)leaf[123];b;a;main(;|$)')
echo "cpuburn -traces: $chain of $burnt samples are leafN;b;a;main"
((chain >= leaves * 95 / 100)) || {
	grep cpuburn "$OUT/traces.tsv" | sort -rn | awk 'NR <= 20'
	fail "only $chain of cpuburn's $leaves leaf samples show leafN;b;a;main in -traces"
}

# ---- readzero: kernel frames, named, in [kernel.kallsyms], under read_loop
read -r kern rzt < <(traces_match readzero '(^|;)(vfs_read|ksys_read);(.*;)?do_syscall_64;(.*;)?read_loop;main(;|$)')
echo "readzero -traces: $kern of $rzt samples are vfs_read|ksys_read;...;do_syscall_64;...;read_loop;main"
((rzt >= 500)) || fail "only $rzt readzero samples"
((kern * 100 >= rzt * 80)) || {
	grep readzero "$OUT/traces.tsv" | sort -rn | awk 'NR <= 20'
	fail "only $kern of $rzt readzero samples show the read system call in the kernel under read_loop;main"
}
kmap=$(rawk '/^Mappings/ { on = 1; next } on && $pp_map_file == "[kernel.kallsyms]" { sub(":", "", $pp_map_id); print $pp_map_id }' "$OUT/raw.txt")
[[ -n $kmap ]] || fail "no [kernel.kallsyms] mapping: $(sed -n '/^Mappings/,$p' "$OUT/raw.txt")"
for f in do_syscall_64 vfs_read; do
	rawk -v f="$f" -v m="M=$kmap" '/^Locations/ { on = 1; next } /^Mappings/ { on = 0 }
		on && $pp_loc_mapping == m && $pp_loc_function == f && $pp_loc_address ~ /^0xffff/ { ok = 1 } END { exit !ok }' "$OUT/raw.txt" ||
		fail "no $f location at a kernel address in [kernel.kallsyms] (mapping $kmap)"
done
echo "readzero: do_syscall_64 and vfs_read are kernel locations of mapping $kmap [kernel.kallsyms]"
unnamed=$(rawk -v m="M=$kmap" '/^Locations/ { on = 1; next } /^Mappings/ { on = 0 } on && $pp_loc_mapping == m && NF == pp_loc_mapping' "$OUT/raw.txt" | wc -l)
((unnamed == 0)) || fail "$unnamed kernel locations have no function name"

# ---- labels
pp -tags -tagfocus=comm=cpuburn "$OUT/p.pb.gz" >"$OUT/tags-cpuburn.txt" || fail "go tool pprof -tags failed"
pp -tags "$OUT/p.pb.gz" >"$OUT/tags.txt" || fail "go tool pprof -tags failed"
for k in pid tid comm cpu; do
	grep -q "^ *$k: Total" "$OUT/tags.txt" || fail "no label $k in -tags: $(cat "$OUT/tags.txt")"
done
# cpuburn is one thread: all its samples say pid = tid = its pid.
for k in pid tid; do
	awk -v k="$k" -v want="$burn" '$1 == k ":" { on = 1; next } /^ [a-z]+: Total/ { on = 0 }
		on && NF >= 3 { n++; if ($NF == want) ok = 1 }
		END { exit !(ok && n == 1) }' "$OUT/tags-cpuburn.txt" ||
		fail "cpuburn's $k label is not $burn on every sample: $(cat "$OUT/tags-cpuburn.txt")"
done
cpus=$(awk '$1 == "cpu:" { on = 1; next } /^ [a-z]+: Total/ { on = 0 } on && NF >= 3 { print $NF }' "$OUT/tags.txt" | sort -n | tr '\n' ' ')
[[ $cpus == "0 1 " ]] || fail "cpu labels are '$cpus', want '0 1 '"
comms=$(awk '$1 == "comm:" { on = 1; next } /^ [a-z]+: Total/ { on = 0 } on && NF >= 3 { print $NF }' "$OUT/tags.txt" | sort | tr '\n' ' ')
[[ " $comms" == *" cpuburn "* && " $comms" == *" readzero "* ]] || fail "comm labels are '$comms'"
awk '$1 == "pid:" { on = 4; next } on && on-- && $NF == rz { ok = 1 } END { exit !ok }' rz="$rz" "$OUT/tags.txt" || fail "readzero's pid $rz is not among the top pid labels"
echo "labels: pid/tid $burn on every cpuburn sample, cpus $cpus, comms $comms"

# cpu/nanoseconds: samples weigh their period; no more CPU time than there was.
cpu_ns=$(rawk '/^Samples:/ { on = 1; next } /^Locations/ { on = 0 } on && $pp_sample_ns ~ /^[0-9]+:$/ { n += $pp_sample_ns } END { printf "%.0f", n }' "$OUT/raw.txt")
echo "pprof: $cpu_ns ns of CPU time sampled in $end_dur ns on 2 CPUs ($(awk -v c="$cpu_ns" -v d="$end_dur" 'BEGIN { printf "%.0f", 100 * c / d }')% of the duration)"
# Both CPUs were busy all along, so ~200% is right; but a tick that comes
# late (a loaded TCG host) stands for one period however long it waited, so
# only half a CPU's worth is demanded.
awk -v c="$cpu_ns" -v d="$end_dur" 'BEGIN { exit !(c <= 2 * d * 1.05 && c >= 0.5 * d) }' ||
	fail "$cpu_ns ns of CPU time in $end_dur ns with 2 CPUs busy"
if [[ -s $OUT/pprof.err ]]; then sed 's/^/  pprof: /' "$OUT/pprof.err" | sort | uniq -c | awk 'NR <= 5'; fi
echo "u_pprof: ok"
