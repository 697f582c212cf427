#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# u_exited: processes that exited before cprof-dump ran are symbolized.
# Four shortlived processes (one after the other, each with its own pid and
# its own randomized load address) spin and exit while a profile runs; by
# the time cprof-dump reads the stream they are gone, and the pprof still
# shows each one's samples as shortlived_spin under main (from the stream's
# mapping records and the binary on disk), with libc's frame named too.
# Runs on 6.1 only: the module's mapping records are the same code on
# every kernel, and u_container's exited programs show them on 6.12.
# vm-kernels: 6.1
# vm-timeout: 240
set -euo pipefail
# shellcheck source=../lib/kprof.sh
. "$REPO/tests/vm/lib/kprof.sh"

# shellcheck source=../lib/uprof.sh
. "$REPO/tests/vm/lib/uprof.sh"

kload
ctl freq=999 seconds=60
# The reader; "stop=1" ends the profile once the processes have run.
reader_start "$OUT/p.raw"
pids=()
for i in 1 2 3 4; do
	"$WORKLOADS/shortlived" 1 >"$OUT/short.$i" || fail "shortlived failed"
	pids+=("$(awk '{ print $3 }' "$OUT/short.$i")")
done
sleep 0.3
reader_stop
"$WORKLOADS/streamtext" <"$OUT/p.raw" >"$OUT/p.raw.txt" || fail "the stream is not well-formed"
for pid in "${pids[@]}"; do
	[[ ! -e /proc/$pid ]] || fail "shortlived $pid is still there"
done
echo "shortlived pids ${pids[*]}: all exited before cprof-dump"

"$CPROF_DUMP" -i "$OUT/p.raw" -o "$OUT/p.pb.gz" 2>"$OUT/dump.err" ||
	fail "cprof-dump failed: $(cat "$OUT/dump.err")"
sed 's/^/  cprof-dump: /' "$OUT/dump.err"
grep -q shortlived "$OUT/dump.err" && fail "cprof-dump could not symbolize shortlived: $(cat "$OUT/dump.err")"

# One line per sample: count TAB comm TAB pid TAB tid TAB cpu TAB stack
# (leaf first, ";"-joined).
pp -traces -sample_index=samples -tagfocus=comm=shortlived "$OUT/p.pb.gz" >"$OUT/traces.txt" ||
	fail "go tool pprof -traces failed: $(tail -n 3 "$OUT/pprof.err")"
traces_tsv "$OUT/traces.txt" >"$OUT/traces.tsv"

# Each 1 s process: most samples in shortlived_spin;main (the rest is
# the dynamic loader's start-up and the exit, slow under TCG), libc's frame
# below main named too, and no frame of the binary left unnamed.
for pid in "${pids[@]}"; do
	read -r spin libc unnamed total < <(rawk -F '\t' -v p="$pid" '$trace_pid == p {
		t += $trace_count
		if ($trace_stack ~ /(^|;)shortlived_spin;main(;|$)/) s += $trace_count
		if ($trace_stack ~ /;main;__libc_start_call_main(;|$)/) c += $trace_count
		if ($trace_stack ~ /\[shortlived\]/) u += $trace_count
	} END { print s + 0, c + 0, u + 0, t + 0 }' "$OUT/traces.tsv")
	echo "shortlived $pid: $spin of $total samples in shortlived_spin;main, $libc reach __libc_start_call_main, $unnamed with unnamed shortlived frames"
	((total >= 50)) || fail "only $total samples of shortlived $pid (1 s of CPU)"
	((spin * 100 >= total * 50)) || {
		rawk -F '\t' -v p="$pid" '$trace_pid == p' "$OUT/traces.tsv" | sort -rn | awk 'NR <= 10'
		fail "only $spin of $total samples of exited pid $pid are shortlived_spin;main"
	}
	((libc * 100 >= total * 50)) || fail "only $libc of $total samples of exited pid $pid name libc's __libc_start_call_main"
	((unnamed == 0)) || fail "$unnamed samples of exited pid $pid have unnamed frames in shortlived"
done

# -top: shortlived_spin is the hottest function of the shortlived processes.
pp -top -sample_index=samples -tagfocus=comm=shortlived "$OUT/p.pb.gz" >"$OUT/top.txt" || fail "go tool pprof -top failed"
first=$(rawk '$top_flat ~ /^[0-9]+$/ && $top_flat_pct ~ /%$/ && $top_cum_pct ~ /%$/ { print $top_name; exit }' "$OUT/top.txt")
echo "-top of comm=shortlived: hottest is $first"
[[ $first == shortlived_spin ]] || { cat "$OUT/top.txt"; fail "the hottest function of shortlived is '$first'"; }
echo "u_exited: ok"
