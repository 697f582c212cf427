#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# u_jit: JavaScript functions V8 compiled, named from the map Node.js
# writes for perf (/tmp/perf-PID.map), and JIT frames without one.
# jitwork.js runs three functions 1:2:4 (jitA, jitB, jitC) under main:
#   1. node --perf-basic-prof, run as user nobody (its map is nobody's: the
#      module records the process's uid with its mappings, and cprof-dump
#      reads a map only if that user or root owns it), a pid= profile
#      read by cat; the process exits before cprof-dump reads its map's
#      names: each function named, its share of the three within 3
#      points of 1:2:4, the mapping [jit] in pprof, and the stacks go on
#      below the JIT frames to the process's entry;
#   2. node without the flag: the same frames are [jit]+OFFSET, the
#      stacks still reach the process's entry; a map planted at its path
#      by another user (nobody, for a process of root's) is refused and
#      named in the summary, its names nowhere;
#   3. node --perf-basic-prof in a container (mount and pid namespaces of
#      its own, its own /tmp): its map is /tmp/perf-1.map there, none on
#      the host; read inside its root while it runs, its functions named;
#   4. JitWork (the same three methods in Java) on Debian's openjdk-17
#      with -XX:+UnlockDiagnosticVMOptions -XX:+DumpPerfMapAtExit (the JVM
#      writes its map as it exits: SIGTERM once profiled, as a service
#      manager stops it) and -XX:+PreserveFramePointer (compiled
#      Java keeps frame pointers: the walk goes on below it), profiled
#      after it is warm: in the Java thread's user-mode samples, a method
#      of JitWork named in at least 90 %.
# The module's part (the uid in the mapping records) is the same code on
# every kernel: make check runs it on 6.1 only (U_JIT_ANY=1: on any).
# vm-timeout: 900
set -euo pipefail
# shellcheck source=../lib/kprof.sh
. "$REPO/tests/vm/lib/kprof.sh"
# shellcheck source=../lib/uprof.sh
. "$REPO/tests/vm/lib/uprof.sh"

[[ -n ${U_JIT_ANY:-} || ($KVER == 6.1.0-* && $KVER != *-rt-*) ]] ||
	skip "runs on 6.1 only (U_JIT_ANY=1: on any kernel)"

NODE=$(command -v node || true)
[[ -n $NODE ]] || fail "node not found (tests/deps.sh installs nodejs)"
JAVA=$(command -v java || true)
[[ -n $JAVA ]] || fail "java not found (tests/deps.sh installs openjdk-17-jdk-headless)"
JS=$REPO/tests/workloads/jitwork.js
SECS=${U_JIT_SECS:-6}

kload
# node's output (V8 logs there) on the guest's tmpfs: writing it to the
# host's share would put 9p's waits in node's profile
LOCAL=$(mktemp -d)
trap 'rm -rf "$LOCAL"' EXIT
# node as nobody reads the script through the share, writes its map in /tmp
start_node() { # OUTFILE ARGS...: the workload, its pid in $node once it runs
	local out=$1
	shift
	"$@" "$JS" 600 >"$out" 2>&1 &
	node=$!
	# V8 may log before jitwork says it runs
	wait_started "$out" 'jitwork '
	# V8 compiles the three functions in the first rounds; TCG is slow
	sleep 4
}

# counts A B C FOLDED: "A B C TOTAL ENTRY" node sample counts: with a
# frame holding A (else B, else C), all, and those whose stack goes down to
# the process's entry (node's main is inlined into libc's caller of it) or
# a thread's
counts() {
	awk -v a="$1" -v b="$2" -v c="$3" '/^node;/ {
		n = $NF; t += n
		if (index($0, a)) ca += n; else if (index($0, b)) cb += n; else if (index($0, c)) cc += n
		if ($0 ~ /^node;(_start|__libc_start_call_main|start_thread|__clone3?);/) e += n
	} END { print ca + 0, cb + 0, cc + 0, t + 0, e + 0 }' "$4"
}
within3() { # A B C: each share of the three within 3 points of 1:2:4
	awk -v a="$1" -v b="$2" -v c="$3" 'BEGIN {
		t = a + b + c; if (!t) exit 1
		d1 = 100 * a / t - 100 / 7; d2 = 100 * b / t - 200 / 7; d3 = 100 * c / t - 400 / 7
		printf "%.1f : %.1f : %.1f %% (1:2:4 is 14.3 : 28.6 : 57.1)", 100 * a / t, 100 * b / t, 100 * c / t
		exit !(d1 * d1 <= 9 && d2 * d2 <= 9 && d3 * d3 <= 9)
	}'
}

# --- 1. with the map, as nobody; the process gone before the names are read
start_node "$LOCAL/flag.out" setpriv --reuid=65534 --regid=65534 --clear-groups \
	"$NODE" --perf-basic-prof
map=/tmp/perf-$node.map
[[ -f $map && $(stat -c %u "$map") == 65534 ]] || fail "node wrote no map of nobody's at $map"
ctl freq=499 seconds="$SECS" pid="$node"
reader_start "$OUT/flag.raw"
sleep $((SECS + 1))
reader_stop
kill "$node" 2>/dev/null || true
wait "$node" 2>/dev/null || true
"$CPROF_DUMP" -i "$OUT/flag.raw" -f folded -o "$OUT/flag.folded" 2>"$OUT/flag.err" ||
	fail "cprof-dump failed: $(cat "$OUT/flag.err")"
"$CPROF_DUMP" -i "$OUT/flag.raw" -o "$OUT/flag.pb.gz" 2>/dev/null ||
	fail "cprof-dump (pprof) failed"
sed 's/^/  cprof-dump: /' "$OUT/flag.err"
read -r a b c total entry < <(counts 'jitA ' 'jitB ' 'jitC ' "$OUT/flag.folded")
split=$(within3 "$a" "$b" "$c") || ok=no
echo "with --perf-basic-prof (node as nobody, gone before cprof-dump): $total samples, jitA $a jitB $b jitC $c: $split; $entry reach the process's entry or a thread's"
awk '{ print $NF "\t" $0 }' "$OUT/flag.folded" | sort -rn >"$OUT/flag.sorted"
head -n 5 "$OUT/flag.sorted" | cut -c1-300 | sed 's/^/  /'
((a + b + c >= 100)) || fail "only $((a + b + c)) samples name jitA, jitB or jitC"
[[ ${ok:-yes} == yes ]] || fail "the three functions' shares are not 1:2:4 within 3 points"
((entry * 100 >= total * 90)) || fail "only $entry of $total samples reach the process's entry or a thread's"
grep -q '/tests/workloads/jitwork.js:' "$OUT/flag.folded" || fail "the JS frames do not carry their file"
pp -raw "$OUT/flag.pb.gz" >"$OUT/flag.rawpp" || fail "go tool pprof -raw failed"
rawk '$1 ~ /^[0-9]+:$/ && $pp_map_file == "[jit]" { ok = 1 } END { exit !ok }' "$OUT/flag.rawpp" ||
	fail "no [jit] mapping in pprof"

# --- 2. without the map, as root; then nobody plants one at its path
start_node "$LOCAL/bare.out" "$NODE"
rm -f "/tmp/perf-$node.map"
ctl freq=499 seconds="$SECS" pid="$node"
reader_start "$OUT/bare.raw"
sleep $((SECS + 1))
reader_stop
"$CPROF_DUMP" -i "$OUT/bare.raw" -f folded -o "$OUT/bare.folded" 2>"$OUT/bare.err" ||
	fail "cprof-dump failed: $(cat "$OUT/bare.err")"
sed 's/^/  cprof-dump: /' "$OUT/bare.err"
read -r jit _ _ total entry < <(counts ';[jit]+0x' '=none=' '=none=' "$OUT/bare.folded")
echo "without the flag: $total samples, $jit with [jit] frames, $entry reach the process's entry or a thread's"
((jit * 100 >= total * 50)) || fail "only $jit of $total samples have [jit] frames"
((entry * 100 >= total * 90)) || fail "only $entry of $total samples reach the process's entry or a thread's below [jit] frames"
grep -q 'in \[jit\] (no perf map /tmp/perf-PID.map)' "$OUT/bare.err" || fail "the summary does not say the JIT code has no map"
setpriv --reuid=65534 --regid=65534 --clear-groups sh -c \
	"printf '0 7fffffffffff PLANTED\n' >/tmp/perf-$node.map" || fail "nobody could not write a map in /tmp"
"$CPROF_DUMP" -i "$OUT/bare.raw" -f folded -o "$OUT/planted.folded" 2>"$OUT/planted.err" ||
	fail "cprof-dump failed: $(cat "$OUT/planted.err")"
kill "$node" 2>/dev/null || true
wait "$node" 2>/dev/null || true
sed 's/^/  cprof-dump: /' "$OUT/planted.err"
grep -q PLANTED "$OUT/planted.folded" && fail "a map planted by another user named the frames"
grep -q 'owned by another user (uid 65534)' "$OUT/planted.err" || fail "the refused map is not named in the summary"

# --- 3. in a container: its own /tmp, its own pid numbers
# the script opened before its /tmp hides whatever is under /tmp here
# shellcheck disable=SC2016 # $0 and $1 are the inner shell's
unshare -m -p -f --mount-proc --propagation private sh -c \
	'exec 3<"$1" && mount -t tmpfs tmpfs /tmp && exec "$0" --perf-basic-prof - 600 <&3 3<&-' \
	"$NODE" "$JS" >"$LOCAL/ns.out" 2>&1 &
ns=$!
wait_started "$LOCAL/ns.out" 'jitwork '
node=$(pgrep -P "$ns" | head -n 1)
[[ -n $node ]] || fail "no node under unshare $ns"
grep -q '^jitwork 1$' "$LOCAL/ns.out" || fail "node is not pid 1 in its namespace: $(grep jitwork "$LOCAL/ns.out")"
[[ ! -e /tmp/perf-$node.map && ! -e /tmp/perf-1.map ]] || fail "a map of the container's node is on the host"
sleep 4
ctl freq=499 seconds=5 pid="$node"
reader_start "$OUT/ns.raw"
sleep 6
reader_stop
"$CPROF_DUMP" -i "$OUT/ns.raw" -f folded -o "$OUT/ns.folded" 2>"$OUT/ns.err" ||
	fail "cprof-dump failed: $(cat "$OUT/ns.err")"
# the init of its pid namespace: only SIGKILL reaches it from outside
kill -KILL "$node" 2>/dev/null || true
wait "$ns" 2>/dev/null || true
sed 's/^/  cprof-dump: /' "$OUT/ns.err"
read -r a b c total _ < <(counts 'jitA ' 'jitB ' 'jitC ' "$OUT/ns.folded")
echo "in a container (node pid $node, 1 in its namespace, its map in its own /tmp): $total samples, jitA $a jitB $b jitC $c"
((a + b + c >= 50 && (a + b + c) * 100 >= total * 80)) ||
	fail "only $((a + b + c)) of $total samples of the container's node name jitA, jitB or jitC"

# --- 4. Java, its map written as the JVM exits
"$JAVA" -XX:+UnlockDiagnosticVMOptions -XX:+DumpPerfMapAtExit -XX:+PreserveFramePointer \
	-cp "$WORKLOADS" JitWork 600 >"$OUT/java.out" 2>&1 &
java=$!
for ((i = 0; i < 1200; i++)); do
	grep -q '^warm' "$OUT/java.out" && break
	kill -0 "$java" 2>/dev/null || fail "JitWork exited: $(cat "$OUT/java.out")"
	sleep 0.1
done
grep -q '^warm' "$OUT/java.out" || fail "JitWork did not warm up in 120 s"
sleep 4
ctl freq=499 seconds="$SECS" pid="$java"
reader_start "$OUT/java.raw"
sleep $((SECS + 1))
reader_stop
kill -TERM "$java" 2>/dev/null || true
rc=0
wait "$java" || rc=$?
((rc == 0 || rc == 143)) || fail "JitWork exited with $rc on SIGTERM: $(cat "$OUT/java.out")"
[[ -f /tmp/perf-$java.map ]] || fail "the JVM wrote no map at its exit"
"$CPROF_DUMP" -i "$OUT/java.raw" -f folded -o "$OUT/java.folded" 2>"$OUT/java.err" ||
	fail "cprof-dump failed: $(cat "$OUT/java.err")"
sed 's/^/  cprof-dump: /' "$OUT/java.err"
# the Java thread ("java", not the launcher's, which waits), in user mode
read -r named total a b c < <(awk '/^java;/ {
	n = $NF; line = $0; sub(/ [0-9]+$/, "", line)
	k = split(line, f, ";")
	if (f[k] ~ /_\[k\]$/) next
	t += n
	if (line ~ /JitWork\./) j += n
	if (index(line, "JitWork.jitA(")) ca += n; else if (index(line, "JitWork.jitB(")) cb += n; else if (index(line, "JitWork.jitC(")) cc += n
} END { print j + 0, t + 0, ca + 0, cb + 0, cc + 0 }' "$OUT/java.folded")
split=$(within3 "$a" "$b" "$c") || true
echo "java (openjdk-17, perf map at exit): $named of $total user-mode samples of the Java thread name a JitWork method ($(awk -v a="$named" -v b="$total" 'BEGIN { printf "%.1f", b ? 100 * a / b : 0 }') %); jitA $a jitB $b jitC $c: $split"
awk '/^java;/ { print $NF "\t" $0 }' "$OUT/java.folded" | sort -rn >"$OUT/java.sorted"
head -n 3 "$OUT/java.sorted" | cut -c1-300 | sed 's/^/  /'
((total >= 100)) || fail "only $total user-mode samples of the Java thread"
((named * 100 >= total * 90)) || fail "only $named of $total user-mode samples name a JitWork method"
echo "u_jit: ok"
