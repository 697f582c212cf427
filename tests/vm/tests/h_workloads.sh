#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# h_workloads: the sample workloads do what the profile tests rely on.
#   - cpuburn spends its time in leaf1:leaf2:leaf3 = 1:2:4, each seen with
#     the whole chain leafN <- b <- a <- main by a frame-pointer unwind
#     (checked with perf, cpu-clock sampling, as an independent profiler);
#   - threads runs one thread on CPU 0 and one on CPU 1 and prints their tids;
#   - readzero spends most of its time in the kernel;
#   - shortlived exits after about 0.3 s.
# Runs on 6.1 only: the workloads are the same programs on every kernel.
# vm-kernels: 6.1
# vm-timeout: 300
set -euo pipefail
# shellcheck source=../lib/kprof.sh
. "$REPO/tests/vm/lib/kprof.sh"

ms_since() {
	echo $((($(date +%s%N) - $1) / 1000000))
}

# cpuburn: leaf ratios and call chains.  tests/vm/lib/perf.sh and -B -N
# spare perf its slowest start-up work under TCG.
perf=$REPO/tests/vm/lib/perf.sh
if command -v perf >/dev/null; then
	start=$(date +%s%N)
	# -a and cpuburn's samples (its pid, kept by the shell it replaces),
	# not a per-task record: that flips perf's static key in __schedule,
	# text patching that TCG has turned into an oops (docs/design.md)
	"$perf" record -q -a -B -N -e cpu-clock -F 499 -g -o "$OUT/cpuburn.data" -- \
		bash -c "echo \$\$ >'$OUT/cpuburn.pid'; exec '$WORKLOADS/cpuburn' 3" >/dev/null
	# perf script prints each sample as a "comm" line, one "ip sym" line per
	# frame (innermost first) and a blank line.  Count the chains.
	"$perf" script -i "$OUT/cpuburn.data" --pid "$(<"$OUT/cpuburn.pid")" -F comm,ip,sym 2>/dev/null |
		awk '
		NF == 0 { if (n) chain[c[0] " " c[1] " " c[2] " " c[3]]++; n = 0; next }
		n == 0 && NF == 1 { next }
		{ c[n++] = $2 }
		END { for (k in chain) print chain[k], k }
		' | sort -rn >"$OUT/cpuburn.chains"
	echo "perf on cpuburn: $(ms_since "$start") ms; top chains:"
	head -n 5 "$OUT/cpuburn.chains"
	count() {
		awk -v leaf="$1" '$2 == leaf && $3 == "b" && $4 == "a" && $5 == "main" { n += $1 }
			END { print n + 0 }' "$OUT/cpuburn.chains"
	}
	l1=$(count leaf1)
	l2=$(count leaf2)
	l3=$(count leaf3)
	echo "cpuburn samples with full chains: leaf1=$l1 leaf2=$l2 leaf3=$l3"
	n=$((l1 + l2 + l3))
	((n >= 200)) || fail "only $n cpuburn samples with full chains, too few to judge"
	# Shares 1/7, 2/7, 4/7, each within 5 points or 4 standard deviations
	# of the sampling noise, whichever is wider.
	for leaf in "leaf1 $l1 1" "leaf2 $l2 2" "leaf3 $l3 4"; do
		read -r name got parts <<<"$leaf"
		awk -v got="$got" -v n="$n" -v parts="$parts" -v name="$name" 'BEGIN {
			want = parts / 7; share = got / n
			tol = 4 * sqrt(want * (1 - want) / n); if (tol < 0.05) tol = 0.05
			printf "%s: %.1f%% of the samples, want %.1f%% +- %.1f\n", name, 100 * share, 100 * want, 100 * tol
			exit !(share > want - tol && share < want + tol)
		}' || fail "cpuburn's $name share is off: the work is not 1:2:4"
	done
else
	echo "perf missing (linux-perf): cpuburn's profile not checked"
	"$WORKLOADS/cpuburn" 0.5 | grep -q '^cpuburn: [1-9][0-9]* rounds' || fail "cpuburn did not run"
fi

# threads: one thread on each CPU, with the tids it printed.  Long enough
# to be looked at on a loaded host, stopped when done.
"$WORKLOADS/threads" 60 >"$OUT/threads.out" &
pid=$!
wait_lines "$OUT/threads.out" 2 || true
for cpu in 0 1; do
	tid=$(awk -v c="cpu$cpu" '$1 == c { print $2 }' "$OUT/threads.out")
	[[ -n $tid ]] || fail "threads did not print a tid for cpu$cpu"
	[[ -r /proc/$pid/task/$tid/stat ]] || fail "threads printed tid $tid, not one of its tasks"
	# Field 39 of stat: the CPU the task last ran on (comm has no blanks).
	on=$(awk '{ print $39 }' "/proc/$pid/task/$tid/stat")
	[[ $on == "$cpu" ]] || fail "thread $tid for cpu$cpu runs on cpu$on"
	mask=$(taskset -p "$tid" | awk '{ print $NF }')
	[[ $mask == $((1 << cpu)) ]] || fail "thread $tid affinity mask $mask, want $((1 << cpu))"
done
kill "$pid"
wait "$pid" || [[ $? == 143 ]] || fail "threads exited with $? before it was stopped"
cat "$OUT/threads.out"

# readzero: mostly system time.
TIMEFORMAT='%U %S'
{ time "$WORKLOADS/readzero" 1 >/dev/null; } 2>"$OUT/readzero.times"
read -r user sys <"$OUT/readzero.times"
echo "readzero: user ${user}s sys ${sys}s"
awk -v u="$user" -v s="$sys" 'BEGIN { exit !(s > u) }' || fail "readzero spent less time in the kernel than in user space"

# shortlived: about 0.3 s, then gone.
start=$(date +%s%N)
"$WORKLOADS/shortlived" >"$OUT/shortlived.out"
ms=$(ms_since "$start")
echo "shortlived ran ${ms} ms"
((ms >= 250 && ms < $(slow_ms 5000))) || fail "shortlived ran ${ms} ms, want about 300"
grep -q '^shortlived: pid [0-9]' "$OUT/shortlived.out" || fail "shortlived did not print its pid"
echo "h_workloads: ok"
