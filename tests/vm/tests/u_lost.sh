#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# u_lost: samples lost because the reader fell behind are accounted, not
# hidden.  With small per-CPU buffers (buffer_kb=64) and a reader that stops
# reading for 4 s of a 6 s profile, the module drops samples; then:
#   - the pprof's total sample count is /proc/cprof/stats' samples + lost
#     for that profile (and the END record's);
#   - the lost ones sit on a "[lost samples]" location, per CPU (cpu label),
#     and pprof -top shows that row with exactly the lost count;
#   - a comment says how many were lost; -f folded and -f top count them too.
# Runs on 6.1 only: the ring and its lost counts are the same code on
# every kernel (k_stream holds the END record's count to the LOST
# records' on each).
# vm-kernels: 6.1
# vm-timeout: 240
set -euo pipefail
# shellcheck source=../lib/kprof.sh
. "$REPO/tests/vm/lib/kprof.sh"

# shellcheck source=../lib/uprof.sh
. "$REPO/tests/vm/lib/uprof.sh"

kload buffer_kb=64
ctl freq=999 seconds=6
# hostile deep: 127-frame user stacks, ~1 KiB a sample, fill a 64 KiB
# buffer in a fraction of a second.
spawn "$WORKLOADS/hostile" deep 600
spawn "$WORKLOADS/cpuburn" 600
s0=$(stat_of samples)
l0=$(stat_of lost)
read_stalled 4 >"$OUT/p.raw" || fail "the stalled reader failed"
s1=$(stat_of samples)
l1=$(stat_of lost)
stop
"$WORKLOADS/streamtext" <"$OUT/p.raw" >"$OUT/p.raw.txt" || fail "the stream is not well-formed"
samples=$((s1 - s0))
lost=$((l1 - l0))
read -r end_samples end_lost < <(rawk '$1 == "E" { print $E_samples, $E_lost }' "$OUT/p.raw.txt")
lrec=$(rawk '$1 == "L" { n += $L_samples } END { print n + 0 }' "$OUT/p.raw.txt")
echo "stats: $samples samples, $lost lost; END: $end_samples samples, $end_lost lost; LOST records: $lrec"
((lost > 0)) || fail "nothing lost with 64 KiB buffers and a reader stalled for 4 s"
((end_samples == samples && end_lost == lost)) || fail "END ($end_samples + $end_lost lost) disagrees with stats ($samples + $lost lost)"

"$CPROF_DUMP" -i "$OUT/p.raw" -o "$OUT/p.pb.gz" 2>"$OUT/dump.err" || fail "cprof-dump failed: $(cat "$OUT/dump.err")"
sed 's/^/  cprof-dump: /' "$OUT/dump.err"
pp -raw "$OUT/p.pb.gz" >"$OUT/raw.txt" || fail "go tool pprof -raw failed: $(tail -n 3 "$OUT/pprof.err")"
total=$(rawk '/^Samples:/ { on = 1; next } /^Locations/ { on = 0 } on && $pp_sample_ns ~ /^[0-9]+:$/ { n += $pp_sample_count } END { print n + 0 }' "$OUT/raw.txt")
echo "pprof: $total samples in all"
((total == samples + lost)) || fail "the pprof holds $total samples; stats counted $samples + $lost lost"

# The [lost samples] location and its samples, with their cpu labels.
lid=$(rawk '/^Locations/ { on = 1; next } /^Mappings/ { on = 0 } on && /\[lost samples\]/ { sub(":", "", $pp_loc_id); print $pp_loc_id; exit }' "$OUT/raw.txt")
[[ -n $lid ]] || fail "no [lost samples] location"
rawk -v id="$lid" '/^Samples:/ { on = 1; next } /^Locations/ { on = 0 }
	on && $pp_sample_ns ~ /^[0-9]+:$/ { pending = ($pp_sample_loc == id && NF == pp_sample_loc) ? $pp_sample_count : -1; next }
	on && pending >= 0 && /cpu:\[/ { c = $0; sub(/.*cpu:\[/, "", c); sub(/ .*/, "", c); print c, pending; pending = -1 }' \
	"$OUT/raw.txt" | sort -n >"$OUT/lost-by-cpu.txt"
rawk '$1 == "L" { n[$L_cpu] += $L_samples } END { for (c in n) print c, n[c] }' "$OUT/p.raw.txt" | sort -n >"$OUT/lost-rec-by-cpu.txt"
echo "lost per cpu in the pprof: $(tr '\n' ' ' <"$OUT/lost-by-cpu.txt")(LOST records: $(tr '\n' ' ' <"$OUT/lost-rec-by-cpu.txt"))"
(($(awk '{ n += $2 } END { print n + 0 }' "$OUT/lost-by-cpu.txt") == lost)) || fail "the [lost samples] samples do not add up to $lost"
cmp -s "$OUT/lost-by-cpu.txt" "$OUT/lost-rec-by-cpu.txt" || fail "lost samples per cpu differ from the stream's LOST records"
grep -q "^Comment: $lost samples lost" "$OUT/raw.txt" || fail "no comment saying $lost samples were lost: $(grep '^Comment' "$OUT/raw.txt")"

# What a user sees: pprof -top has a [lost samples] row of that count.
pp -top -sample_index=samples -nodecount=100000 -nodefraction=0 "$OUT/p.pb.gz" >"$OUT/top.txt" || fail "go tool pprof -top failed"
row=$(grep -F '[lost samples]' "$OUT/top.txt" || true)
echo "pprof -top: $row"
[[ $(rawk '{ print $top_flat }' <<<"$row") == "$lost" ]] || fail "pprof -top's [lost samples] row is '$row', want flat $lost"
grep -q 'leaf3' "$OUT/top.txt" || fail "no leaf3 in the samples that were not lost"

# The other formats count them too.
"$CPROF_DUMP" -i "$OUT/p.raw" -f folded -o "$OUT/folded.txt" 2>/dev/null || fail "cprof-dump -f folded failed"
ftotal=$(awk '{ n += $NF } END { print n + 0 }' "$OUT/folded.txt")
flost=$(awk '/\[lost samples\]/ { n += $NF } END { print n + 0 }' "$OUT/folded.txt")
echo "folded: $ftotal samples, $flost on [lost samples] stacks"
((ftotal == total && flost == lost)) || fail "folded: $ftotal samples ($flost lost), want $total ($lost lost)"
"$CPROF_DUMP" -i "$OUT/p.raw" -f top -n 0 -o "$OUT/cprof-top.txt" 2>/dev/null || fail "cprof-dump -f top failed"
grep -q '\[lost samples\]$' "$OUT/cprof-top.txt" || fail "-f top has no [lost samples] row"
grep -q "$lost samples lost" "$OUT/cprof-top.txt" || fail "-f top does not say $lost samples were lost"
echo "u_lost: ok"
