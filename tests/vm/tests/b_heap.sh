#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# b_heap: what profiling a process's allocations costs it, beside BCC's
# memleak, and whether both rank its live memory alike.  heaper
# (tests/workloads/heaper.c) keeps 8 MiB from keep_few and 24 MiB from
# keep_many (16 KiB blocks) at each round while churn allocates and
# frees 64 MiB; at each SIGUSR2 it times a malloc and free pair over a
# second.  In turn:
#   - none: no profile;
#   - cprof: cprof-dump --kind heap -p PID at Go's rate (512 KiB);
#   - memleak: BCC's memleak-bpfcc -p PID (Debian's bpfcc-tools), if
#     installed: every allocation, its stack into BPF maps.
# Each profile runs one round, and its ranking of the live bytes by
# function is printed: keep_many, then keep_few, churn nowhere.  Printed:
# the ns a pair takes under each, and the slowdowns.  A benchmark, not
# in make check (memleak's programs compile for minutes under TCG).
# vm-timeout: 1500
set -euo pipefail
# shellcheck source=../lib/kprof.sh
. "$REPO/tests/vm/lib/kprof.sh"
# shellcheck source=../lib/uprof.sh
. "$REPO/tests/vm/lib/uprof.sh"

kload
"$WORKLOADS/heaper" 8192 24576 65536 16384 >"$OUT/heaper.out" &
hp=$!
bg+=("$hp")
wait_lines "$OUT/heaper.out" 1 || fail "heaper did not start"
pid=$(awk '$1 == "ready" { print $2 }' "$OUT/heaper.out")

signal() { # SIG TENTHS
	local n
	n=$(wc -l <"$OUT/heaper.out")
	kill "-$1" "$hp"
	wait_lines "$OUT/heaper.out" $((n + 1)) "$2"
}
speed() {
	signal USR2 $((100 * ${CPROF_SLOW:-1})) || fail "heaper did not time its mallocs"
	tail -n 1 "$OUT/heaper.out" | awk '$1 == "speed" { print $2 }'
}
round() {
	signal USR1 $((1200 * ${CPROF_SLOW:-1})) || fail "heaper did not finish a round"
}
none=$(speed)

"$CPROF_DUMP" --kind heap -d 600 -p "$pid" -o "$OUT/cprof.pb.gz" 2>"$OUT/cprof.err" &
cli=$!
wait_profiling || fail "no heap profile started"
sleep "${CPROF_SLOW:-1}"
# cprof-dump loading the unwind tables of what runs (memleak compiling,
# below): at most 60 s, the guest's 2 CPUs then heaper's again
settle "$cli" 120
cprof=$(speed)
round
ctl stop=1
wait "$cli" || fail "cprof-dump --kind heap failed: $(cat "$OUT/cprof.err")"
pp -top -nodecount=1000 -nodefraction=0 -sample_index=inuse_space -unit=B \
	"$OUT/cprof.pb.gz" >"$OUT/cprof.top" || fail "go tool pprof -top failed"
rank_cprof=$(rawk '$top_name ~ /^(keep_few|keep_many|churn)$/ { v = $top_cum; sub(/B$/, "", v); print v + 0, $top_name }' \
	"$OUT/cprof.top" | sort -rn | awk '{ printf "%s%s %d", n++ ? ", " : "", $2, $1 }')
echo "cprof inuse_space by function: $rank_cprof"

ML=$(command -v memleak-bpfcc || true)
memleak=
if [[ -n $ML ]]; then
	mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug
	# a report every 10 s of what is outstanding, 20 stacks
	"$ML" -p "$pid" -T 20 10 >"$OUT/memleak.txt" 2>"$OUT/memleak.err" &
	ml=$!
	for ((i = 0; i < 6000; i++)); do
		find "/proc/$ml/fd" -lname '*bpf-prog*' 2>/dev/null | grep -q . && break
		sleep 0.1
	done
	sleep 2
	settle "$ml" 120
	memleak=$(speed)
	round
	n=$(grep -c 'Top 20 stacks' "$OUT/memleak.txt" || true)
	for ((i = 0; i < 600; i++)); do
		(($(grep -c 'Top 20 stacks' "$OUT/memleak.txt" || true) > n)) && break
		sleep 0.1
	done
	# TERM: a job of a script ignores SIGINT
	kill "$ml"
	wait "$ml" || true
	# the last report: bytes by the functions its stacks hold
	rank_ml=$(awk '/Top 20 stacks/ { delete b; next }
		/bytes in [0-9]+ allocations from stack/ { cur = $1; seen = ""; next }
		{ for (f in want) if (index($0, f) && !index(seen, f)) { b[f] += cur; seen = seen " " f } }
		BEGIN { want["keep_few"]; want["keep_many"]; want["churn"] }
		END { for (f in b) print b[f], f }' "$OUT/memleak.txt" |
		sort -rn | awk '{ printf "%s%s %d", n++ ? ", " : "", $2, $1 }')
	echo "memleak outstanding bytes by function: $rank_ml"
else
	echo "memleak: bpfcc-tools not installed"
fi

echo "a malloc and free pair: ${none} ns alone, ${cprof} ns under cprof's heap profile (x$(awk -v a="$cprof" -v b="$none" 'BEGIN { printf "%.1f", a / b }'))${memleak:+, ${memleak} ns under memleak (x$(awk -v a="$memleak" -v b="$none" 'BEGIN { printf "%.1f", a / b }'))}"
stop
echo "b_heap: ok"
