#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# b_dump: where cprof-dump's time goes (make bench; docs/BENCHMARKS.md).
#
# One capture of the bench job (two copies of tests/bench/spin at 1999 Hz,
# idle CPUs sampled too), then cprof-dump on it in steps, each twice:
# start-up alone (--version), reading and aggregating without symbols
# (--no-symbolize), user symbols only (--kallsyms /dev/null), everything,
# and everything from a copy of kallsyms in a file (so without the
# kernel's formatting of /proc/kallsyms); beside them, cat /proc/kallsyms.
# Then perf record of one full conversion: its samples per DSO.
# Nothing here fails on a figure, only on a tool that does not work.
# vm-timeout: 1500
set -euo pipefail
# shellcheck source=../lib/kprof.sh
. "$REPO/tests/vm/lib/kprof.sh"
# shellcheck source=../lib/perfcmp.sh
. "$REPO/tests/vm/lib/perfcmp.sh"

[[ -x $CPROF_DUMP ]] || skip "no cprof-dump ($CPROF_DUMP)"
SPIN=$REPO/build/bench/spin
[[ -x $SPIN ]] || skip "no $SPIN (make bench builds it)"
perf_find
W=$(mktemp -d)
READER=
cleanup() {
	set +e
	[[ -n $READER ]] && echo stop=1 >/proc/cprof/ctl
	wait
	perf_restore
	rm -rf "$W"
}
trap cleanup EXIT

kload
ctl freq=1999 idle=1 seconds=86400
job() {
	local p
	"$SPIN" 3000 64 >/dev/null &
	p=$!
	"$SPIN" 3000 64 >/dev/null
	wait "$p"
}
reader_start "$W/cap.raw" 300
job
reader_stop
n=$("$WORKLOADS/streamtext" <"$W/cap.raw" | grep -c '^S ' || true)
echo "capture: $n samples, $(stat -c %s "$W/cap.raw") bytes"
cp /proc/kallsyms "$W/kallsyms"

step() { # LABEL CMD...: wall ms of CMD, output discarded
	local label=$1 s
	shift
	s=$(now_ms)
	"$@" >/dev/null 2>"$W/err" || fail "$label failed: $(head -n 3 "$W/err")"
	printf '| %s | %d |\n' "$label" $(($(now_ms) - s))
}
echo
echo "| step | ms |"
echo "| --- | ---: |"
for _ in 1 2; do
	step "cat /proc/kallsyms" cat /proc/kallsyms
	step "cprof-dump --version (start-up)" "$CPROF_DUMP" --version
	step "--no-symbolize" "$CPROF_DUMP" -i "$W/cap.raw" --no-symbolize -o "$W/o.pb.gz"
	step "user symbols only (--kallsyms /dev/null)" \
		"$CPROF_DUMP" -i "$W/cap.raw" --kallsyms /dev/null -o "$W/o.pb.gz"
	step "everything" "$CPROF_DUMP" -i "$W/cap.raw" -o "$W/o.pb.gz"
	step "everything, kallsyms from a file" \
		"$CPROF_DUMP" -i "$W/cap.raw" --kallsyms "$W/kallsyms" -o "$W/o.pb.gz"
done
echo
"$PERF" record -q -F 4999 -o "$W/dump.data" -- \
	"$CPROF_DUMP" -i "$W/cap.raw" -o "$W/o.pb.gz" >/dev/null 2>&1 ||
	fail "perf record of cprof-dump failed"
echo "perf record of one conversion, samples per DSO:"
"$PERF" report -i "$W/dump.data" --stdio --sort dso 2>/dev/null |
	awk '/^ *[0-9.]+%/ && n++ < 8'
echo "b_dump: ok"
