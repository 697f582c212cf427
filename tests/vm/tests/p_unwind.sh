#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# p_unwind: complete user stacks in code without frame pointers, from the
#   unwind tables cprof-dump -d gives the module, with perf's figures for
#   the same workloads in the same guest beside cprof's (perf -g walks frame
#   pointers; perf --call-graph dwarf copies 16 KiB of stack a sample and
#   unwinds it later).  Each workload runs alone; cprof profiles it with -d
#   -p for 5 s at 999 Hz (about 5000 samples: a 3-point bound on a share
#   is then over 4 standard deviations of sampling noise), then perf -g
#   and perf dwarf side by side, each 3 s at 499 Hz.  Asserted, on cprof's
#   samples of
#   the workload:
#   - qsortsplit (-O2, no frame pointers; main -> sort_one : sort_three =
#     1:3 -> libc's qsort -> the comparator): >= 99% reach main, and
#     sort_one's share of those within 3 points of 25%;
#   - python3 (Debian's, a pure-Python loop): >= 95% reach Py_RunMain;
#   - bzip2 -9 </dev/urandom (Debian's, stripped, no frame pointers, its
#     work in libbz2 and in read()):
#     >= 95% reach __libc_start_main (glibc's own frame below main);
#   - leafshare (-O1 -fno-omit-frame-pointer; a, b, c call one frameless
#     leaf 1:2:4): a;spin, b;spin and c;spin within 3 points of 1/7, 2/7,
#     4/7 of the samples in spin;
#   - gospin (Go: main.one, main.three call a frameless leaf 1:3): within 3
#     points of 25% and 75% of the samples in main.spin;
#   - realign (-O2, no frame pointers; main -> one : three = 1:3 -> spin,
#     one and three realigning their stack by gcc's DRAP, their CFA the
#     word at rbp - 8): >= 99% reach main, one's share of spin within 3
#     points of 25%;
#   - openssl speed sha256 (Debian's libcrypto: its SHA-256 assembly keeps
#     the entry stack pointer in a register, then in its realigned frame,
#     CFA = *(rsp + N) + 8): >= 90% reach __libc_start_main;
#   - the stream marks stacks unwound with tables (flag bit 7): at least
#     one sample with it, and /proc/cprof/stats counts them (user_table).
#   perf's shares are printed beside, not asserted; perf -g's on 6.1 only
#   (frame pointers are walked alike on every kernel).  perf -g and perf
#   dwarf run at once, each its own perf record and perf script (2 to 4 s
#   of start-up each under emulation): one record with an event for each
#   walk would do, but perf script 6.1 then unwinds none of the dwarf
#   event's stacks.
# Runs on 6.1 and 6.12, not their -rt flavours: the walk is the same code
# in the same hard-interrupt tick there (k_utables and k_stacks run on
# 6.12-rt), and this test is two and a half minutes of make check a kernel.
# vm-long: a side-by-side with an anchor (make check-long)
# vm-timeout: 900
set -euo pipefail
# shellcheck source=../lib/kprof.sh
. "$REPO/tests/vm/lib/kprof.sh"
# shellcheck source=../lib/perfcmp.sh
. "$REPO/tests/vm/lib/perfcmp.sh"

[[ $(uname -r) != *-rt-* ]] || skip "runs on 6.1 and 6.12 only"
[[ -x $CPROF_DUMP ]] || skip "no cprof-dump ($CPROF_DUMP)"
perf_find
trap 'stop_work; perf_restore' EXIT
perf_unthrottle
kload budget=50
W=$(mktemp -d)
PY=/usr/bin/python3
[[ -x $PY ]] || fail "no $PY"

WORK=
start_work() { # CMD...: runs until stop_work, its output in $W/work.out
	"$@" >"$W/work.out" 2>&1 &
	WORK=$!
	sleep 1
	kill -0 "$WORK" || fail "$* did not start"
}
stop_work() {
	[[ -z $WORK ]] && return 0
	kill "$WORK" 2>/dev/null || true
	pkill -P "$WORK" 2>/dev/null || true
	wait "$WORK" 2>/dev/null || true
	WORK=
}

# Stacks as "root;...;leaf count" lines of the workload's samples.
cprof_stacks() { # NAME
	"$CPROF_DUMP" -d 5 -F 999 -p "$WORK" -f folded -o "$W/$1.cprof" 2>"$W/$1.cprof.err" ||
		fail "cprof-dump -d failed: $(cat "$W/$1.cprof.err")"
	awk '{ c = $NF; s = substr($0, 1, length($0) - length(c) - 1)
		sub(/^[^;]*;/, "", s); print s, c }' "$W/$1.cprof"
}
perf_stacks() { # NAME MODE: MODE -g or dwarf
	local cg=(-g)
	[[ $2 == dwarf ]] && cg=(--call-graph "dwarf,16384")
	# -a and the workload's samples, not -p: a per-task perf record
	# flips perf's static key in __schedule at its start and end, text
	# patching that TCG has turned into an oops (docs/design.md)
	"$PERF" record -q -a -e cpu-clock -F 499 "${cg[@]}" -o "$W/$1.$2.data" -- sleep 3 \
		>"$W/$1.$2.log" 2>&1 || { echo "perf record $2 failed: $(tail -n 3 "$W/$1.$2.log")" >&2; return 1; }
	# --no-inline: the functions' own frames (the workloads built here
	# inline none of the calls the shares name; perf's shares are printed,
	# not asserted); resolving inlined calls' names is most of perf
	# script's time
	# (set -e does not hold here: the callers test the status)
	local rc=0
	"$PERF" script --no-inline -i "$W/$1.$2.data" --pid "$WORK" -F ip,sym 2>"$W/$1.$2.script.log" | awk '
	function flush() { if (n) print st, 1; n = 0; st = "" }
	NF == 0 { flush(); next }
	{ name = $2; sub(/\+0x[0-9a-f]+$/, "", name); st = n++ ? name ";" st : name }
	END { flush() }' || rc=$?
	rm -f "$W/$1.$2.data"
	((rc == 0)) || { echo "perf script $2 failed: $(tail -n 3 "$W/$1.$2.script.log")" >&2; return 1; }
}

# share STACKS ALL_RE PART_RE: "total matched part" sample counts.
share() {
	awk -v all="$2" -v part="$3" '{ c = $NF; s = substr($0, 1, length($0) - length(c) - 1)
		n += c; if (s ~ all) { m += c; if (s ~ part) p += c } }
		END { print n + 0, m + 0, p + 0 }' "$1"
}
pct() { # A B: A/B in percent, one decimal
	awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b ? 100 * a / b : 0 }'
}
within() { # VALUE TARGET POINTS
	awk -v v="$1" -v t="$2" -v d="$3" 'BEGIN { exit !(v >= t - d && v <= t + d) }'
}

# perf -g beside the others: on 6.1 only
FP=0
[[ $KVER != 6.1.*-amd64 || $KVER == *-rt-* ]] || FP=1

# profile_all NAME CMD...: cprof, perf -g (FP), perf dwarf on one run of
# CMD; with READY set, from when CMD printed a line starting with it.
profile_all() {
	local name=$1
	shift
	start_work "$@"
	[[ -z ${READY:-} ]] || wait_started "$W/work.out" "$READY" 120
	cprof_stacks "$name" >"$W/$name.c.st"
	local g='' bad=''
	if ((FP)); then
		perf_stacks "$name" -g >"$W/$name.g.st" &
		g=$!
	fi
	perf_stacks "$name" dwarf >"$W/$name.d.st" || bad+=" dwarf"
	# both done before a failure ends the test: no perf left running
	[[ -z $g ]] || wait "$g" || bad+=" -g"
	[[ -z $bad ]] || fail "$name: perf$bad failed"
	stop_work
}

# reach NAME RE MIN: the share of stacks matching RE, asserted for cprof
reach() {
	local name=$1 re=$2 min=$3 t m p line=""
	for k in c g d; do
		if [[ $k == g ]] && ((!FP)); then
			line+=" -"
			continue
		fi
		read -r t m p < <(share "$W/$name.$k.st" "$re" "$re")
		line+=" $(pct "$m" "$t")% of $t"
		[[ $k == c ]] && { ct=$t; cm=$m; }
	done
	echo "$name: reach $re: cprof, perf -g, perf dwarf:$line"
	((ct >= 1000)) || fail "$name: only $ct cprof samples"
	((cm * 100 >= ct * min)) || {
		# (head ends the pipe early: sort's SIGPIPE is no failure)
		grep -Ev "$re" "$W/$name.c.st" | sort -k2nr | head -n 5 || true
		fail "$name: $cm of $ct cprof stacks reach $re, want >= $min%"
	}
}

# split NAME LEAF_RE TARGET PART_RE...: each part's share of the stacks
# through LEAF_RE, against TARGET (percent) in order
split_check() {
	local name=$1 leaf=$2 t m p k i d
	shift 2
	local -a want=()
	while [[ $1 != -- ]]; do want+=("$1"); shift; done
	shift
	i=0
	for part in "$@"; do
		local line=""
		for k in c g d; do
			if [[ $k == g ]] && ((!FP)); then
				line+=" -"
				continue
			fi
			read -r t m p < <(share "$W/$name.$k.st" "$leaf" "$part")
			line+=" $(pct "$p" "$m")%"
			[[ $k == c ]] && { cm=$m; cp=$p; }
		done
		echo "$name: $part of $leaf (want ${want[i]}%): cprof, perf -g, perf dwarf:$line"
		((cm >= 1000)) || fail "$name: only $cm cprof samples in $leaf"
		# 3 points, or 4 standard deviations of a share of cm samples
		# where that is more (25 % of 1000: 1.4 points): the split is a
		# sample, and make check runs on loaded machines
		d=$(awk -v w="${want[i]}" -v m="$cm" 'BEGIN {
			d = 400 * sqrt(w / 100 * (1 - w / 100) / m)
			printf "%.1f", (d > 3 ? d : 3) }')
		within "$(pct "$cp" "$cm")" "${want[i]}" "$d" ||
			fail "$name: $part has $(pct "$cp" "$cm")% of $leaf, want ${want[i]} +- $d"
		i=$((i + 1))
	done
}

tables0=$(stat_of user_table)
profile_all qsortsplit "$WORKLOADS/qsortsplit" 600
reach qsortsplit '(^|;)main;' 99
split_check qsortsplit '(^|;)main;' 25 75 -- '(^|;)main;sort_one;' '(^|;)main;sort_three;'

# from its loop on: on a loaded host its start-up (imports over 9p) took
# the whole of cprof's profile
READY=ready profile_all python3 "$PY" -c '
def f(n):
    s = 0
    for i in range(n):
        s += i * i
    return s
print("ready", flush=True)
while True:
    f(10000)'
reach python3 '(^|;)Py_RunMain;' 95

profile_all bzip2 bash -c 'exec bzip2 -9 -c </dev/urandom'
reach bzip2 '(^|;)__libc_start_(main|call_main)(_impl)?;' 95

profile_all leafshare "$WORKLOADS/leafshare" 600
split_check leafshare ';spin$' 14.3 28.6 57.1 -- ';a;spin$' ';b;spin$' ';c;spin$'

profile_all gospin "$WORKLOADS/gospin" 600
split_check gospin ';main\.spin$' 25 75 -- ';main\.one;main\.spin$' ';main\.three;main\.spin$'

profile_all realign "$WORKLOADS/realign" 600
reach realign '(^|;)main;' 99
split_check realign ';spin$' 25 75 -- ';one;spin$' ';three;spin$'

# One block size for the whole run; killed by stop_work.
profile_all openssl openssl speed -seconds 300 -bytes 8192 sha256
reach openssl '(^|;)__libc_start_(main|call_main)(_impl)?;' 90

tables=$(($(stat_of user_table) - tables0))
echo "user walks with tables: $tables; unwind tables loaded: $(stat_of unwind_tables) ($(stat_of unwind_bytes) bytes)"
((tables > 0)) || fail "no sample used an unwind table"
echo "p_unwind: ok"
