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
# Then perf record of one full conversion: its samples per DSO.  Last, a
# capture of about 40 000 samples (the job for 10 s) and perf record -g -a
# of the same job at the same rate: cprof-dump with an empty symbol cache,
# then with the cache it filled (three times), --no-symbolize (three
# times), and perf report --stdio (default options, three times); the
# medians and their ratios.
# The last part's figures also go to $OUT/results, key value lines
# (tests/bench/summary.sh).  Nothing here fails on a figure, only on a
# tool that does not work.
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

# ~40 000 samples: the job for 10 s, under cprof, then under perf -g
job10() {
	local a b
	"$SPIN" 100000000 64 >/dev/null &
	a=$!
	"$SPIN" 100000000 64 >/dev/null &
	b=$!
	sleep 10
	kill "$a" "$b"
	wait "$a" "$b" 2>/dev/null || true
}
reader_start "$W/big.raw" 300
job10
reader_stop
"$PERF" record -q -g -a -F 1999 -o "$W/big.data" -- sleep 10 >/dev/null 2>"$W/err" &
perf=$!
job10
wait "$perf" || fail "perf record -g -a failed: $(head -n 3 "$W/err")"
bn=$("$WORKLOADS/streamtext" <"$W/big.raw" | grep -c '^S ' || true)
pn=$("$PERF" script -i "$W/big.data" -F cpu 2>/dev/null | wc -l)
mkdir -m 700 "$W/syms"
timed() { # FILE CMD...: CMD's wall ms appended to FILE, output discarded
	local f=$1 s
	shift
	s=$(now_ms)
	"$@" >/dev/null 2>"$W/err" || fail "$* failed: $(head -n 3 "$W/err")"
	echo $(($(now_ms) - s)) >>"$f"
}
timed "$W/t-first" "$CPROF_DUMP" -i "$W/big.raw" --symbol-cache "$W/syms" -o "$W/b.pb.gz"
for _ in 1 2 3; do
	timed "$W/t-nosym" "$CPROF_DUMP" -i "$W/big.raw" --no-symbolize -o "$W/b.pb.gz"
	timed "$W/t-second" "$CPROF_DUMP" -i "$W/big.raw" --symbol-cache "$W/syms" -o "$W/b.pb.gz"
	timed "$W/t-report" "$PERF" report -i "$W/big.data" --stdio
done
first=$(<"$W/t-first")
nosym=$(median <"$W/t-nosym")
second=$(median <"$W/t-second")
report=$(median <"$W/t-report")
echo "40 000 samples: cprof-dump's capture $bn samples, perf's $pn"
echo "cprof-dump, empty symbol cache: $first ms; --no-symbolize: median $nosym ms of $(tr '\n' ' ' <"$W/t-nosym"); with the cache filled: median $second ms of $(tr '\n' ' ' <"$W/t-second")"
echo "perf report --stdio: median $report ms of $(tr '\n' ' ' <"$W/t-report")"
awk -v n="$nosym" -v s="$second" -v r="$report" -v f="$first" 'BEGIN {
	printf "second conversion / --no-symbolize: %.2f; perf report / second conversion: %.1f; perf report / first: %.1f\n", s / n, r / s, r / f }'
{
	echo "kernel $(uname -r)"
	echo "big_cprof_samples $bn"
	echo "big_perf_samples $pn"
	echo "t_first_ms $first"
	echo "t_nosym_ms $nosym"
	echo "t_second_ms $second"
	echo "t_report_ms $report"
} >"$OUT/results"
echo "b_dump: ok"
