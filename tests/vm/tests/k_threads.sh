#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# k_threads: two threads pinned to CPU 0 and CPU 1: each one's samples carry
# its own tid and the CPU it is pinned to.
# vm-timeout: 120
set -euo pipefail
# shellcheck source=../lib/kprof.sh
. "$REPO/tests/vm/lib/kprof.sh"

kload
ctl freq=999 seconds=3
"$WORKLOADS/threads" $((5 * ${CPROF_SLOW:-1})) >"$OUT/threads.out" &
wait_lines "$OUT/threads.out" 2 || fail "threads did not start its threads"
profile "$OUT/p.raw"
wait
cat "$OUT/threads.out"
pid=$(pgrep -x threads || true)
for cpu in 0 1; do
	tid=$(awk -v c="cpu$cpu" '$1 == c { print $2 }' "$OUT/threads.out")
	[[ -n $tid ]] || fail "threads printed no tid for cpu$cpu"
	read -r all right < <(rawk -v t="$tid" -v c="$cpu" '$1 == "S" && $S_tid == t {
		n++; if ($S_cpu == c) m++ } END { print n + 0, m + 0 }' "$OUT/p.raw.txt")
	echo "tid $tid: $right of $all samples on cpu$cpu"
	((all >= 150)) || fail "only $all samples for tid $tid"
	((right * 100 >= all * 99)) || fail "tid $tid: $right of $all samples on cpu$cpu"
	tgid=$(rawk -v t="$tid" '$1 == "S" && $S_tid == t { print $S_pid; exit }' "$OUT/p.raw.txt")
	[[ -z $pid || $tgid == "$pid" ]] || fail "tid $tid sampled with pid $tgid, want $pid"
	main=$(rawk -v t="$tid" '$1 == "S" && $S_tid == t && $S_pid == $S_tid' "$OUT/p.raw.txt" | wc -l)
	((main == 0)) || fail "worker thread $tid has samples with tid == pid"
done
echo "k_threads: ok"
