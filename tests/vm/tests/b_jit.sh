#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# b_jit: JIT frames named as perf names them, on the same run of a
# runtime that writes its perf map while it is profiled.  node
# --perf-basic-prof --interpreted-frames-native-stack --no-turbo-inlining
# runs jitcall.js (work called by jsOne, jsTwo and jsFour for 1:2:4 of its
# time) from just after cprof-dump -d's profile started, so V8 compiles,
# replaces and reuses code (and appends to /tmp/perf-PID.map) while it is
# sampled; perf record -g samples the same node process from when the
# script starts (node's own start-up can take perf's whole 7 s under
# TCG); both profiles end while node still runs, and perf script reads the map
# before node is stopped.  Of node's samples with a frame of jsOne, jsTwo
# or jsFour, each one's share in cprof-dump's folded stacks is within 3
# points of its share in perf script's call chains, each side with at
# least 100 such samples.
# The map's reader is userland's, the same on every kernel: 6.1 only
# (P_JIT_ANY=1: on any).  In make bench, not make check: both sides sample
# about a thousand stacks, so two shares of the same split differ by a
# point or two from sampling alone, and 3 points is not met on every run..
# vm-timeout: 300
# vm-long: side-by-side with perf
set -euo pipefail
# shellcheck source=../lib/kprof.sh
. "$REPO/tests/vm/lib/kprof.sh"
# shellcheck source=../lib/perfcmp.sh
. "$REPO/tests/vm/lib/perfcmp.sh"

[[ -n ${P_JIT_ANY:-} || ($KVER == 6.1.0-* && $KVER != *-rt-*) ]] ||
	skip "runs on 6.1 only (P_JIT_ANY=1: on any kernel)"
[[ -x $CPROF_DUMP ]] || skip "no cprof-dump ($CPROF_DUMP)"
NODE=$(command -v node || true)
[[ -n $NODE ]] || fail "node not found (tests/deps.sh installs nodejs)"
perf_find
perf_unthrottle
W=$(mktemp -d)
node=
cleanup() {
	[[ -z $node ]] || kill "$node" 2>/dev/null || true
	perf_restore
	rm -rf "$W" "/tmp/perf-$node.map"
}
trap cleanup EXIT

kload
# the profile first, then node, then perf on node: both see V8 compile
# the functions; cprof-dump is stopped (SIGINT keeps what it has) when
# perf's 7 s are over.  As a user runs it: node's table compiles while
# the profile runs (the JS frames keep frame pointers either way).
"$CPROF_DUMP" -d 120 -F 499 -f folded -o "$OUT/cprof.folded" 2>"$OUT/cprof.err" &
dump=$!
wait_profiling $((600 * ${CPROF_SLOW:-1})) || fail "cprof-dump's profile did not start"
"$NODE" --perf-basic-prof --interpreted-frames-native-stack --no-turbo-inlining \
	"$REPO/tests/workloads/jitcall.js" 600 >"$W/node.out" 2>&1 &
node=$!
# (with node 20.20 its start-up took all of perf's 7 s)
wait_started "$W/node.out" jitcall 120
"$PERF" record -q -g -F 499 -p "$node" -o "$W/perf.data" -- sleep 7 \
	>"$W/perf-record.out" 2>&1 || fail "perf record failed: $(tail -n 3 "$W/perf-record.out")"
kill -INT "$dump"
wait "$dump" || fail "cprof-dump failed: $(cat "$OUT/cprof.err")"
kill -0 "$node" 2>/dev/null || fail "node exited before the profiles ended: $(cat "$W/node.out")"
"$PERF" script -i "$W/perf.data" --kallsyms /proc/kallsyms --comm node -F ip,sym \
	>"$OUT/perf.script" 2>"$W/perf-script.err" || fail "perf script failed: $(tail -n 3 "$W/perf-script.err")"
kill "$node" 2>/dev/null || true
wait "$node" 2>/dev/null || true
sed 's/^/  cprof-dump: /' "$OUT/cprof.err"

# "ONE TWO FOUR": node's samples with a frame of jsOne (else jsTwo, else
# jsFour), in folded stacks or in perf script's chains (on stdin)
count_folded() {
	awk '/^node;/ { n = $NF
		if (index($0, "jsOne")) a += n; else if (index($0, "jsTwo")) b += n; else if (index($0, "jsFour")) c += n
	} END { print a + 0, b + 0, c + 0 }'
}
count_perf() {
	awk 'function done() { if (s == 1) a++; else if (s == 2) b++; else if (s == 4) c++; s = 0 }
	NF == 0 { done(); next }
	!s { if (index($0, "jsOne")) s = 1; else if (index($0, "jsTwo")) s = 2; else if (index($0, "jsFour")) s = 4 }
	END { done(); print a + 0, b + 0, c + 0 }'
}
read -r ca cb cc < <(count_folded <"$OUT/cprof.folded")
read -r pa pb pc < <(count_perf <"$OUT/perf.script")
echo "node's samples: cprof $(awk '/^node;/ { n += $NF } END { print n + 0 }' "$OUT/cprof.folded"), perf $(awk 'NF == 0 { n++ } END { print n + 0 }' "$OUT/perf.script")"
awk -v a="$ca" -v b="$cb" -v c="$cc" -v x="$pa" -v y="$pb" -v z="$pc" 'BEGIN {
	t = a + b + c; u = x + y + z
	printf "cprof: jsOne %d jsTwo %d jsFour %d (%.1f : %.1f : %.1f %%)\n", a, b, c, t ? 100 * a / t : 0, t ? 100 * b / t : 0, t ? 100 * c / t : 0
	printf "perf:  jsOne %d jsTwo %d jsFour %d (%.1f : %.1f : %.1f %%)\n", x, y, z, u ? 100 * x / u : 0, u ? 100 * y / u : 0, u ? 100 * z / u : 0
}'
awk '/^node;/ && /jsOne|jsTwo|jsFour/ { print $NF "\t" $0 }' "$OUT/cprof.folded" | sort -rn >"$OUT/cprof.sorted"
head -n 3 "$OUT/cprof.sorted" | cut -c1-300 | sed 's/^/  /'
((ca + cb + cc >= 100)) || fail "cprof-dump: only $((ca + cb + cc)) of node's samples name jsOne, jsTwo or jsFour"
((pa + pb + pc >= 100)) || fail "perf script: only $((pa + pb + pc)) of node's samples name jsOne, jsTwo or jsFour"
awk -v a="$ca" -v b="$cb" -v c="$cc" -v x="$pa" -v y="$pb" -v z="$pc" 'BEGIN {
	t = a + b + c; u = x + y + z
	d1 = 100 * (a / t - x / u); d2 = 100 * (b / t - y / u); d3 = 100 * (c / t - z / u)
	exit !(d1 * d1 <= 9 && d2 * d2 <= 9 && d3 * d3 <= 9)
}' || fail "a function's share in cprof-dump is more than 3 points from perf script's"
echo "b_jit: ok"
