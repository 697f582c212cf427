#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# k_dlopen: a library dlopen()ed in the middle of a profile gets its mapping
# record, and the samples that land in it are covered by it.
# vm-kernels: 6.12 6.1-rt
# vm-timeout: 120
set -euo pipefail
# shellcheck source=../lib/kprof.sh
. "$REPO/tests/vm/lib/kprof.sh"

kload
ctl freq=999 seconds=4
"$WORKLOADS/dlopener" 4 >"$OUT/dl.out" &
pid=$!
profile "$OUT/p.raw"
wait
cat "$OUT/dl.out"
libm=$(rawk -v p="$pid" '$1 == "M" && $M_pid == p && $M_path ~ /\/libm\.so\.6$/ { print $M_start, $M_end; exit }' "$OUT/p.raw.txt")
[[ -n $libm ]] || fail "no mapping record for libm.so.6 in pid $pid"
read -r start end <<<"$libm"
# Records are stamped with the process's first request, so when libm's
# came shows in the stream's order: after how many of the process's samples.
before=$(rawk -v p="$pid" '$1 == "M" && $M_pid == p && $M_path ~ /\/libm\.so\.6$/ { exit }
	$1 == "S" && $S_pid == p { n++ } END { print n + 0 }' "$OUT/p.raw.txt")
echo "libm mapped at $start-$end, its record after $before samples of pid $pid"
((before >= 100)) || fail "libm's record came with the first ones: it was not picked up mid-run"
inlibm=$(rawk -v p="$pid" -v s="$start" -v e="$end" '
	function hex(x,   i, v) { v = 0; x = tolower(x); for (i = 1; i <= length(x); i++) v = v * 16 + index("0123456789abcdef", substr(x, i, 1)) - 1; return v }
	BEGIN { S = hex(s); E = hex(e) }
	$1 == "S" && $S_pid == p && $S_nr_user > 0 { x = hex($(S_ip + $S_nr_kernel)); if (x >= S && x < E) n++ }
	END { print n + 0 }' "$OUT/p.raw.txt")
echo "$inlibm samples with their leaf in libm"
((inlibm >= 100)) || fail "only $inlibm samples in libm"
echo "k_dlopen: ok"
