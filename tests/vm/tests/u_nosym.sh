#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# u_nosym: `cprof-dump --no-symbolize` writes addresses and mappings only,
# and pprof symbolizes them afterwards from the binaries:
#   - the --no-symbolize profile names no cpuburn function (pprof
#     -symbolize=none), and its cpuburn mapping carries the file's build ID;
#   - `go tool pprof -symbolize=local` names cpuburn's leaves from the binary
#     at its path, with the 1:2:4 split, under b and a, the same counts as
#     cprof-dump's own symbolization;
#   - moved away from that path, the leaves stay unnamed; with
#     PPROF_BINARY_PATH=DIR and the binary in DIR/BUILD_ID/, upstream pprof
#     names them again (go tool pprof cannot: it reads no build IDs; the
#     test notes that instead of failing).
# vm-kernels: 6.1
# vm-timeout: 240
set -euo pipefail
# shellcheck source=../lib/kprof.sh
. "$REPO/tests/vm/lib/kprof.sh"

# cprof-dump's work on a real profile, the same on every kernel (the
# module's side is the k_ tests'): one kernel, for make check's time

# shellcheck source=../lib/uprof.sh
. "$REPO/tests/vm/lib/uprof.sh"

# A copy of cpuburn that can be moved away after the profile.
run=$(mktemp -d)
cp "$WORKLOADS/cpuburn" "$run/cpuburn"
bid=$(readelf -n "$run/cpuburn" | awk '/Build ID:/ { print $3 }')
[[ -n $bid ]] || fail "cpuburn has no build ID"

kload
ctl freq=999 seconds=6
spawn "$run/cpuburn" 600
profile "$OUT/p.raw"
stop
"$CPROF_DUMP" --no-symbolize -i "$OUT/p.raw" -o "$OUT/ns.pb.gz" 2>"$OUT/dump.err" ||
	fail "cprof-dump --no-symbolize failed: $(cat "$OUT/dump.err")"
sed 's/^/  cprof-dump: /' "$OUT/dump.err"

# Unsymbolized: no function names for cpuburn, its mapping with build ID.
pp -raw -symbolize=none "$OUT/ns.pb.gz" >"$OUT/raw-none.txt" || fail "go tool pprof -raw failed: $(tail -n 3 "$OUT/pprof.err")"
mapline=$(rawk -v f="$run/cpuburn" '/^Mappings/ { on = 1; next } on && $pp_map_file == f' "$OUT/raw-none.txt")
echo "mapping: $mapline"
[[ -n $mapline ]] || fail "no mapping for $run/cpuburn: $(sed -n '/^Mappings/,$p' "$OUT/raw-none.txt")"
[[ $mapline == *" $bid "* || $mapline == *" $bid" ]] || fail "the cpuburn mapping has not the build ID $bid"
[[ $mapline != *"[FN]"* ]] || fail "a --no-symbolize mapping says it has functions"
if grep -Eq '(^| )(leaf[123]|main) ' "$OUT/raw-none.txt"; then
	fail "--no-symbolize profile already names cpuburn functions: $(grep -Em 3 '(^| )(leaf[123]|main) ' "$OUT/raw-none.txt")"
fi

# Symbolized later from the binary at its path.  (go tool pprof's own
# symbolizer reads DWARF only, without inline frames: it names the leaves,
# b and a, but not main, whose code is in another DWARF range, nor libc,
# which has no DWARF; upstream pprof, on binutils, names those too.)
pp -top -symbolize=local -sample_index=samples -nodecount=100000 -nodefraction=0 "$OUT/ns.pb.gz" >"$OUT/top-local.txt" ||
	fail "go tool pprof -symbolize=local failed: $(tail -n 3 "$OUT/pprof.err")"
read -r l1 l2 l3 b a main < <(leaves "$OUT/top-local.txt")
t=$((l1 + l2 + l3))
echo "-symbolize=local: leaf1 $l1 leaf2 $l2 leaf3 $l3 (b $b a $a main $main)"
((t >= 600)) || { head -n 30 "$OUT/top-local.txt"; fail "-symbolize=local: only $t samples named leaf1..3"; }
split_ok "$l1" "$l2" "$l3" || fail "-symbolize=local: leaves not split 1:2:4"
((b >= t && a >= t)) || fail "-symbolize=local: b ($b) and a ($a) do not hold the leaves' $t samples"
# The same names as cprof-dump's own symbolization.
"$CPROF_DUMP" -i "$OUT/p.raw" -o "$OUT/sym.pb.gz" 2>/dev/null || fail "cprof-dump failed"
pp -top -sample_index=samples -nodecount=100000 -nodefraction=0 "$OUT/sym.pb.gz" >"$OUT/top-sym.txt" || fail "go tool pprof -top failed"
read -r s1 s2 s3 sb sa _ < <(leaves "$OUT/top-sym.txt")
echo "cprof-dump symbolized: leaf1 $s1 leaf2 $s2 leaf3 $s3 (b $sb a $sa)"
[[ "$l1 $l2 $l3 $b $a" == "$s1 $s2 $s3 $sb $sa" ]] || fail "pprof's later symbolization disagrees with cprof-dump's"

# Moved away from its path, the binary is not found: nothing named.
bins=$(mktemp -d)
mkdir "$bins/$bid"
mv "$run/cpuburn" "$bins/$bid/cpuburn"
pp -top -symbolize=local -sample_index=samples -nodecount=100000 -nodefraction=0 "$OUT/ns.pb.gz" >"$OUT/top-gone.txt" ||
	fail "go tool pprof -symbolize=local failed: $(tail -n 3 "$OUT/pprof.err")"
read -r g1 g2 g3 _ < <(leaves "$OUT/top-gone.txt")
echo "binary moved away: leaf1 $g1 leaf2 $g2 leaf3 $g3"
((g1 + g2 + g3 == 0)) || fail "leaves named without the binary: the test does not test symbolization"
# PPROF_BINARY_PATH=DIR with DIR/BUILD_ID/cpuburn: upstream pprof finds it
# by build ID.  go tool pprof (cmd/pprof) reads no build IDs (its objTool's
# BuildID() is ""), so it rejects every candidate of a mapping that has
# one: then say so, do not fail.
: >"$OUT/pprof.err"
PPROF_BINARY_PATH=$bins pp -top -symbolize=local -sample_index=samples -nodecount=100000 -nodefraction=0 \
	"$OUT/ns.pb.gz" >"$OUT/top-path.txt" || fail "go tool pprof with PPROF_BINARY_PATH failed: $(tail -n 3 "$OUT/pprof.err")"
read -r p1 p2 p3 pb pa _ < <(leaves "$OUT/top-path.txt")
echo "PPROF_BINARY_PATH=$bins (build ID dir): leaf1 $p1 leaf2 $p2 leaf3 $p3 (b $pb a $pa)"
if ((p1 + p2 + p3 == 0)) && grep -q "build-id mismatch ($bid != )" "$OUT/pprof.err"; then
	echo "NOTE: this go tool pprof ignores PPROF_BINARY_PATH for mappings with a build ID: $(grep -m 1 'build-id mismatch' "$OUT/pprof.err")"
else
	[[ "$p1 $p2 $p3 $pb $pa" == "$l1 $l2 $l3 $b $a" ]] || fail "PPROF_BINARY_PATH symbolization differs from the one at the binary's path: $(tail -n 3 "$OUT/pprof.err")"
fi
echo "u_nosym: ok"
