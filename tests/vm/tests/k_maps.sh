#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# k_maps: mapping records make user frames resolvable after the process is
# gone.  shortlived spins ~0.3 s and exits long before the stream is read;
# the stream must hold MMAP records (path, range, offset, build ID) that
# cover its sampled user addresses and resolve them to its functions.
# vm-kernels: 6.1 6.12-rt
# vm-timeout: 120
set -euo pipefail
# shellcheck source=../lib/kprof.sh
. "$REPO/tests/vm/lib/kprof.sh"

kload
ctl freq=999 seconds=3
profile "$OUT/p.raw" &
wait_profiling || fail "the profile did not start"
"$WORKLOADS/shortlived" >"$OUT/short.out"
wait
pid=$(awk '{ print $3 }' "$OUT/short.out")
[[ ! -d /proc/$pid ]] || fail "shortlived $pid still exists"
bin=$(readlink -f "$WORKLOADS/shortlived")
rawk -v p="$pid" -v b="$bin" '$1 == "M" && $M_pid == p && $M_build_id_size == 20 && $M_path == b { print; n++ }
	END { exit !n }' "$OUT/p.raw.txt" ||
	fail "no mapping record with a build ID for $bin of pid $pid"
rawk -v p="$pid" '$1 == "M" && $M_pid == p && $M_path ~ /\/libc\.so\.6$/ { print; n++ } END { exit !n }' "$OUT/p.raw.txt" ||
	fail "no libc mapping for pid $pid"
BINARIES=$bin symbolize "$OUT/p.raw.txt" >"$OUT/p.sym"
# User-mode samples whose leaf is in shortlived itself (not in ld.so or libc
# during start-up) must resolve to shortlived_spin called from main.
read -r total known < <(rawk -v p="$pid" '$sym_pid == p && $sym_comm == "shortlived" && $sym_flags % 2 == 1 && $sym_user !~ /^\?/ {
	n++; if ($sym_user ~ /^shortlived_spin;main/) m++ } END { print n + 0, m + 0 }' "$OUT/p.sym")
echo "shortlived: $known of $total user-mode samples in its own code resolve to shortlived_spin;main"
((total >= 20)) || fail "only $total samples of shortlived in its own code"
((known * 100 >= total * 95)) || fail "$known of $total resolve"
# The user addresses of shortlived's samples are inside its mapping records:
# every leaf (code that ran), and every frame of a chain that ended cleanly
# (not flagged USER_FAULT: a faulted chain may end in junk, such as the
# stack word ld.so's entry leaves in the frame pointer).
uncovered=$(rawk -v p="$pid" '
	function hex(s,   i, v) { v = 0; s = tolower(s); for (i = 1; i <= length(s); i++) v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1; return v }
	# two passes: a mapping record may follow the samples that asked for it
	FNR == NR { if ($1 == "M" && $M_pid == p) { n++; S[n] = hex($M_start); E[n] = hex($M_end) }; next }
	$1 == "S" && $S_pid == p && $S_comm == "shortlived" {
		last = int($S_flags / 8) % 2 ? S_ip + $S_nr_kernel : NF
		for (i = S_ip + $S_nr_kernel; i <= last && i <= NF; i++) {
			x = hex($i); ok = 0
			for (j = 1; j <= n; j++) if (x >= S[j] && x < E[j]) ok = 1
			if (!ok) bad++
		}
	}
	END { print bad + 0 }' "$OUT/p.raw.txt" "$OUT/p.raw.txt")
((uncovered == 0)) || fail "$uncovered user addresses of pid $pid outside its mapping records"
echo "k_maps: ok"
