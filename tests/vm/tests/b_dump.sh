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
# capture of at least 40 000 samples (the job for 10 s, longer if the host
# delivered fewer ticks) and perf record -g -a of the same job for as long
# at the rate cprof delivered (its budget lowers the rate under
# emulation: at 1999 Hz perf once took 66 801 samples where cprof took
# 36 068, and perf report's time grows with them): cprof-dump with an
# empty symbol cache (its folded output must be the second conversion's),
# then in five interleaved rounds --no-symbolize, cprof-dump with the cache
# it filled and perf report --stdio (default options); each ratio per
# round, its median and range; then perf record -g of a second conversion: its samples per DSO and
# symbol, and the kernel's by the system call or fault it served.
# The capture, /proc/kallsyms and /proc/modules are kept in OUT.
# The last part's medians also go to $OUT/results, key value lines
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

# >= 40 000 samples: the job under cprof for long enough, then under perf -g
jobfor() { # SECONDS
	local a b
	"$SPIN" 100000000 64 >/dev/null &
	a=$!
	"$SPIN" 100000000 64 >/dev/null &
	b=$!
	sleep "$1"
	kill "$a" "$b"
	wait "$a" "$b" 2>/dev/null || true
}
# a loaded host delivers fewer ticks: longer until the capture has enough
secs=10 bn=0
for _ in 1 2 3; do
	reader_start "$W/big.raw" 300
	jobfor "$secs"
	reader_stop
	bn=$("$WORKLOADS/streamtext" <"$W/big.raw" | grep -c '^S ' || true)
	((bn >= 40000)) && break
	secs=$((secs * 42000 / (bn > 0 ? bn : 1) + 1))
	((secs > 120)) && secs=120
done
# the rate cprof delivered per CPU, that both captures hold about as many
rate=$((bn / (secs * $(nproc))))
((rate >= 99)) || rate=99
((rate <= 1999)) || rate=1999
"$PERF" record -q -g -a -F "$rate" -o "$W/big.data" -- sleep "$secs" >/dev/null 2>"$W/err" &
perf=$!
jobfor "$secs"
wait "$perf" || fail "perf record -g -a failed: $(head -n 3 "$W/err")"
pn=$("$PERF" script -i "$W/big.data" -F cpu 2>/dev/null | wc -l)
# the capture and this boot's symbols, to rerun the conversion elsewhere
cp "$W/big.raw" /proc/kallsyms /proc/modules "$OUT/" 2>/dev/null || true
mkdir -m 700 "$W/syms"
timed() { # FILE CMD...: CMD's wall ms appended to FILE, output discarded
	local f=$1 s
	shift
	s=$(now_ms)
	"$@" >/dev/null 2>"$W/err" || fail "$* failed: $(head -n 3 "$W/err")"
	echo $(($(now_ms) - s)) >>"$f"
}
dump() { "$CPROF_DUMP" -i "$W/big.raw" --symbol-cache "$W/syms" "$@"; }
timed "$W/t-first" dump -f folded -o "$W/cold.folded"
dump -f folded -o "$W/warm.folded" ||
	fail "the second conversion failed"
cmp -s "$W/cold.folded" "$W/warm.folded" ||
	fail "the second conversion differs from the first"
# interleaved rounds: a round's ratios compare runs close in time
for _ in 1 2 3 4 5; do
	timed "$W/t-nosym" "$CPROF_DUMP" -i "$W/big.raw" --no-symbolize -o "$W/b.pb.gz"
	timed "$W/t-second" dump -o "$W/b.pb.gz"
	timed "$W/t-report" "$PERF" report -i "$W/big.data" --stdio
done
paste "$W/t-nosym" "$W/t-second" "$W/t-report" |
	awk -v s="$W/r-sym" -v p="$W/r-perf" '{ print $2 / $1 >s; print $3 / $2 >p }'
"$PERF" record -q -g -F 4999 -o "$W/warm.data" -- "$CPROF_DUMP" -i "$W/big.raw" \
	--symbol-cache "$W/syms" -o "$W/b.pb.gz" >/dev/null 2>&1 ||
	fail "perf record of the second conversion failed"
first=$(<"$W/t-first")
stats() { # FILE [FORMAT]: "median M (LO to HI)" of FILE's numbers
	sort -g "$1" | awk -v f="${2:-%.0f}" '{ v[NR] = $1 } END {
		m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
		printf "median " f " (" f " to " f ")", m, v[1], v[NR] }'
}
echo "$secs s of the job: cprof-dump's capture $bn samples, perf's $pn (at $rate Hz)"
echo "cprof-dump, empty symbol cache: $first ms (folded output the same as the second conversion's)"
echo "ms in 5 interleaved rounds: --no-symbolize $(stats "$W/t-nosym"), second conversion $(stats "$W/t-second"), perf report --stdio $(stats "$W/t-report")"
echo "second conversion / --no-symbolize: $(stats "$W/r-sym" %.2f)"
echo "perf report / second conversion: $(stats "$W/r-perf" %.1f)"
echo "perf record of a second conversion, samples per DSO and symbol:"
"$PERF" report -i "$W/warm.data" --stdio --no-children --sort dso,sym \
	-g none 2>/dev/null | awk '/^ *[0-9.]+%/ && n++ < 20'
echo "... the kernel's share by the system call or fault it served:"
"$PERF" report -i "$W/warm.data" --stdio --children --sort sym -g none \
	2>/dev/null | awk '/^ *[0-9.]+%.*\[k\] (__x64_sys_|exc_page_fault|asm_exc)/ && n++ < 12'
{
	echo "kernel $(uname -r)"
	echo "big_cprof_samples $bn"
	echo "big_perf_samples $pn"
	echo "t_first_ms $first"
	echo "t_nosym_ms $(median <"$W/t-nosym")"
	echo "t_second_ms $(median <"$W/t-second")"
	echo "t_report_ms $(median <"$W/t-report")"
} >"$OUT/results"
echo "b_dump: ok"
