#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# k_dlopen: a library dlopen()ed in the middle of a profile gets its mapping
# record, and the samples that land in it are covered by it.
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
libm=$(awk -v p="$pid" '$1 == "M" && $3 == p && $NF ~ /\/libm\.so\.6$/ { print $4, $5; exit }' "$OUT/p.raw.txt")
[[ -n $libm ]] || fail "no mapping record for libm.so.6 in pid $pid"
read -r start end <<<"$libm"
# Records are stamped with the process's first request, so when libm's
# came shows in the stream's order: after how many of the process's samples.
before=$(awk -v p="$pid" '$1 == "M" && $3 == p && $NF ~ /\/libm\.so\.6$/ { exit }
	$1 == "S" && $3 == p { n++ } END { print n + 0 }' "$OUT/p.raw.txt")
echo "libm mapped at $start-$end, its record after $before samples of pid $pid"
((before >= 100)) || fail "libm's record came with the first ones: it was not picked up mid-run"
inlibm=$(awk -v p="$pid" -v s="$start" -v e="$end" '
	function hex(x,   i, v) { v = 0; x = tolower(x); for (i = 1; i <= length(x); i++) v = v * 16 + index("0123456789abcdef", substr(x, i, 1)) - 1; return v }
	BEGIN { S = hex(s); E = hex(e) }
	$1 == "S" && $3 == p && $8 > 0 { x = hex($(10 + $7)); if (x >= S && x < E) n++ }
	END { print n + 0 }' "$OUT/p.raw.txt")
echo "$inlibm samples with their leaf in libm"
((inlibm >= 100)) || fail "only $inlibm samples in libm"
echo "k_dlopen: ok"
