#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# u_formats's host half: cprof-dump on bad input made from the real stream
# the guest half (tests/vm/tests/u_formats.sh) captured, p.raw: truncated
# in a record, at a record and in the header, a record of a bad size, a
# stream of another version, each read as a file in every output format
# and one through a pipe: exit 1, one line on stderr naming the problem
# and its byte offset, and no output file (nor temporary file) left
# behind.  The stream is rejected before anything is symbolized, so the
# host's kernel plays no part: on the host, 16 runs of cprof-dump take
# well under a second; in the guest they took about 20 s.
# Run by tests/vm/run.sh once the VM has exited, with REPO, KVER,
# WORKLOADS and OUT (the guest half's results folder) set.
set -euo pipefail
# shellcheck source=../lib/assert.sh
. "$REPO/tests/vm/lib/assert.sh"

CPROF_DUMP=$REPO/userland/cprof-dump
[[ -x $CPROF_DUMP ]] || fail "no cprof-dump at $CPROF_DUMP"
[[ -s $OUT/p.raw ]] || fail "the guest half left no p.raw in $OUT"
rm -rf "$OUT/bad"

# records: "offset type size" of each record of the stream.
perl -e 'open(F, "<", $ARGV[0]) or die; binmode F; local $/; my $d = <F>;
	my $o = unpack("V", substr($d, 12, 4));
	while ($o + 8 <= length $d) { my ($t, $f, $s) = unpack("vvV", substr($d, $o, 8)); print "$o $t $s\n"; $o += $s }' \
	"$OUT/p.raw" >"$OUT/records.txt"
nrec=$(wc -l <"$OUT/records.txt")
read -r off _ size < <(awk -v n="$nrec" 'NR >= n / 2 && $2 == 1 { print; exit }' "$OUT/records.txt")
[[ -n $off ]] || fail "no sample record in the second half of the stream"
bad_dir=$OUT/bad
mkdir "$bad_dir"
# bad_input NAME WANT: cprof-dump on $OUT/NAME, each output format, fails
# with one line matching WANT and leaves nothing in $bad_dir.
bad_input() {
	local name=$1 want=$2 fmt rc lines
	for fmt in pprof folded top; do
		rc=0
		"$CPROF_DUMP" -i "$OUT/$name" -f "$fmt" -o "$bad_dir/out" 2>"$OUT/$name.$fmt.err" >/dev/null || rc=$?
		lines=$(wc -l <"$OUT/$name.$fmt.err")
		((rc == 1)) || fail "$name -f $fmt: exit $rc, want 1"
		((lines == 1)) || fail "$name -f $fmt: $lines lines on stderr: $(cat "$OUT/$name.$fmt.err")"
		grep -Eq "$want" "$OUT/$name.$fmt.err" || fail "$name -f $fmt: '$(cat "$OUT/$name.$fmt.err")' does not match '$want'"
		[[ -z $(ls -A "$bad_dir") ]] || fail "$name -f $fmt left $(ls -A "$bad_dir") behind"
	done
	echo "bad input $name: exit 1, '$(cat "$OUT/$name.pprof.err")'"
}
head -c $((off + 24)) "$OUT/p.raw" >"$OUT/cut-in-record"
bad_input cut-in-record "truncated sample record at byte $off \\(need $size bytes, have 24\\)"
head -c "$off" "$OUT/p.raw" >"$OUT/cut-at-record"
bad_input cut-at-record "truncated stream: no END record at byte $off"
head -c 40 "$OUT/p.raw" >"$OUT/cut-in-header"
bad_input cut-in-header "truncated header at byte 0"
cp "$OUT/p.raw" "$OUT/bad-size"
printf '\x03\x00\x00\x00' | dd of="$OUT/bad-size" bs=1 seek=$((off + 4)) conv=notrunc status=none
bad_input bad-size "bad size 3 in sample record .* at byte $off"
cp "$OUT/p.raw" "$OUT/bad-version"
printf '\x63\x00\x00\x00' | dd of="$OUT/bad-version" bs=1 seek=8 conv=notrunc status=none
bad_input bad-version "unsupported stream version 99 at byte 8"
# Through a pipe, as `cat /proc/cprof/profile | cprof-dump` would read it.
rc=0
"$CPROF_DUMP" -o "$bad_dir/out" <"$OUT/cut-in-record" 2>"$OUT/stdin.err" || rc=$?
((rc == 1 && $(wc -l <"$OUT/stdin.err") == 1)) || fail "stdin: exit $rc, $(cat "$OUT/stdin.err")"
grep -q "^cprof-dump: stdin: truncated sample record at byte $off " "$OUT/stdin.err" || fail "stdin: $(cat "$OUT/stdin.err")"
[[ -z $(ls -A "$bad_dir") ]] || fail "stdin: left $(ls -A "$bad_dir") behind"
echo "bad input on stdin: '$(cat "$OUT/stdin.err")'"
echo "u_formats:host: ok"
