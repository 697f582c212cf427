#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# h_workloads: the sample workloads do what the profile tests rely on,
# checked with perf (cpu-clock sampling, frame-pointer call graphs) as an
# independent profiler:
#   - cpuburn spends its time in leaf1:leaf2:leaf3 = 1:2:4, each called
#     from b <- a <- main;
#   - threads runs one thread on CPU 0 and one on CPU 1 and prints their tids;
#   - readzero spends most of its time in the kernel under read();
#   - shortlived exits after about 0.3 s.
# vm-timeout: 240
set -euo pipefail

fail() {
	echo "h_workloads: $*" >&2
	exit 1
}

command -v perf >/dev/null || { echo "h_workloads: perf missing (linux-perf)"; exit 77; }
t0=$(date +%s%N)
phase() {
	echo "-- $* at $((($(date +%s%N) - t0) / 1000000)) ms"
}
perf_record() { # OUTPUT CMD...
	local data=$1
	shift
	perf record -q -e cpu-clock -F 499 -g -o "$data" -- "$@" >/dev/null
}

# cpuburn: leaf ratios and call chains.
perf_record "$OUT/cpuburn.data" "$WORKLOADS/cpuburn" 4
phase recorded cpuburn
perf script -i "$OUT/cpuburn.data" -F comm,ip,sym 2>/dev/null >"$OUT/cpuburn.script"
# perf script prints each sample as "comm" then one "ip sym" line per frame,
# innermost first, then a blank line.  Count samples by leaf with the full
# chain leafN -> b -> a -> main.
phase perf script done
awk '
	NF == 0 { if (n) chain[c[0]" "c[1]" "c[2]" "c[3]]++; n = 0; next }
	$1 == "cpuburn" && n == 0 && NF == 1 { next }
	{ c[n++] = $2 }
	END { for (k in chain) print chain[k], k }
' "$OUT/cpuburn.script" | sort -rn >"$OUT/cpuburn.chains"
head -n 8 "$OUT/cpuburn.chains"
count() {
	awk -v leaf="$1" '$2 == leaf && $3 == "b" && $4 == "a" && $5 == "main" { n += $1 } END { print n + 0 }' \
		"$OUT/cpuburn.chains"
}
l1=$(count leaf1)
l2=$(count leaf2)
l3=$(count leaf3)
echo "cpuburn samples with full chains: leaf1=$l1 leaf2=$l2 leaf3=$l3"
((l1 >= 20)) || fail "too few leaf1 samples ($l1) to judge cpuburn"
# 1:2:4 within a third either way.
((l2 * 3 >= l1 * 4 && l2 * 3 <= l1 * 8)) || fail "leaf2/leaf1 = $l2/$l1, want about 2"
((l3 * 3 >= l1 * 8 && l3 * 3 <= l1 * 16)) || fail "leaf3/leaf1 = $l3/$l1, want about 4"

phase threads
# threads: one thread on each CPU, with the tids it printed.
"$WORKLOADS/threads" 3 >"$OUT/threads.out" &
pid=$!
sleep 1
for cpu in 0 1; do
	tid=$(awk -v c="cpu$cpu" '$1 == c { print $2 }' "$OUT/threads.out")
	[[ -n $tid ]] || fail "threads did not print a tid for cpu$cpu"
	[[ -r /proc/$pid/task/$tid/stat ]] || fail "threads printed tid $tid, not one of its tasks"
	# Field 39 of stat is the CPU the task last ran on; comm has no blanks here.
	on=$(awk '{ print $39 }' "/proc/$pid/task/$tid/stat")
	[[ $on == "$cpu" ]] || fail "thread $tid for cpu$cpu runs on cpu$on"
	mask=$(taskset -p "$tid" | awk '{ print $NF }')
	[[ $mask == $((1 << cpu)) ]] || fail "thread $tid affinity mask $mask, want $((1 << cpu))"
done
wait "$pid" || fail "threads exited with $?"
cat "$OUT/threads.out"

phase readzero
# readzero: mostly kernel time, under read().
perf_record "$OUT/readzero.data" "$WORKLOADS/readzero" 2
phase readzero recorded
perf report -i "$OUT/readzero.data" --stdio --no-children --sort dso -q 2>/dev/null >"$OUT/readzero.report"
cat "$OUT/readzero.report"
kpct=$(awk '$2 == "[kernel.kallsyms]" { sub("%", "", $1); print int($1) }' "$OUT/readzero.report")
((${kpct:-0} >= 50)) || fail "readzero spent ${kpct:-0}% in the kernel, want most of it"

# shortlived: about 0.3 s of CPU, then gone.
start=$(date +%s%N)
"$WORKLOADS/shortlived" >"$OUT/shortlived.out"
ms=$((($(date +%s%N) - start) / 1000000))
echo "shortlived ran ${ms} ms"
((ms >= 250 && ms < 5000)) || fail "shortlived ran ${ms} ms, want about 300"
grep -q '^shortlived: pid [0-9]' "$OUT/shortlived.out" || fail "shortlived did not print its pid"
echo "h_workloads: ok"
