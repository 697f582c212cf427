# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Helpers for the tests that put cprof side by side with perf (p_*.sh, the
# fidelity tests, and b_*.sh, the benchmarks), sourced by them.
#
# perf: Debian's linux-perf on the host root (perf 6.1), used as is on both
# guest kernels (6.1 and 6.12).  Its software cpu-clock event is an hrtimer
# per CPU (perf_swevent_hrtimer), like cprof's tick: the two sample alike.
# perf report and perf script get --kallsyms /proc/kallsyms: perf 6.1 on
# 6.12 leaves kernel addresses unresolved in a perf.data without build IDs
# (record -B) otherwise.

# shellcheck source=assert.sh
. "$REPO/tests/vm/lib/assert.sh"

# now_ms: the wall clock in ms, from bash itself: no program to start,
# whose start over 9p under -icount sleep=off would let the clock jump
now_ms() {
	echo $((${EPOCHREALTIME/./} / 1000))
}

# perf_find: sets PERF to a perf that records on this kernel, or skips:
# Debian's /usr/bin/perf (perf 6.1, on the 6.12 guest too) through
# tests/vm/lib/perf.sh, which spares it a walk of /lib/modules over 9p.
# The modules directory is hidden here, in the test's own mount namespace,
# until perf_restore: perf then runs in the namespace of the processes it
# profiles (in another one, perf script cannot find their files once they
# have exited, and cprof's reader would see their paths from outside).
PERF_MODDIR=
perf_find() {
	command -v perf >/dev/null 2>&1 || skip "no perf (Debian linux-perf)"
	PERF_MODDIR=/lib/modules/$(uname -r)/kernel
	if [[ -d $PERF_MODDIR ]]; then
		mount -t tmpfs -o ro,mode=0755 cprof-empty "$PERF_MODDIR" ||
			fail "cannot hide $PERF_MODDIR from perf"
	else
		PERF_MODDIR=
	fi
	PERF=$REPO/tests/vm/lib/perf.sh
	"$PERF" --version >/dev/null 2>&1 || skip "perf does not run: $("$PERF" --version 2>&1 | head -n 1)"
	echo "perf: $(command -v perf) ($("$PERF" --version)) through tests/vm/lib/perf.sh"
}

# perf_unthrottle: perf lowers kernel.perf_event_max_sample_rate when its
# interrupt takes longer than perf_cpu_time_max_percent allows, which under
# TCG it always does: the comparison wants both profilers at the asked rate.
# The old values come back on exit (perf_restore).
perf_unthrottle() {
	PERF_OLD_PCT=$(</proc/sys/kernel/perf_cpu_time_max_percent)
	PERF_OLD_RATE=$(</proc/sys/kernel/perf_event_max_sample_rate)
	# (the kernel takes a new rate only while the percent is neither 0
	# nor 100)
	echo 100000 >/proc/sys/kernel/perf_event_max_sample_rate
	echo 0 >/proc/sys/kernel/perf_cpu_time_max_percent
}

perf_restore() {
	[[ -z $PERF_MODDIR ]] || umount "$PERF_MODDIR" || true
	PERF_MODDIR=
	[[ -n ${PERF_OLD_PCT:-} ]] || return 0
	echo "$PERF_OLD_PCT" >/proc/sys/kernel/perf_cpu_time_max_percent || true
	echo "$PERF_OLD_RATE" >/proc/sys/kernel/perf_event_max_sample_rate 2>/dev/null || true
}

# norm_sym: one name for a function perf and cprof-dump may name by
# different aliases (glibc's __GI___libc_read, __libc_read, __read, read).
# Reads names on stdin (one a line), writes normalized names.
NORM_AWK='
function norm(s) {
	sub(/_\[k\]$/, "", s)
	sub(/^__GI_/, "", s)
	sub(/^_+/, "", s)
	sub(/^libc_/, "", s)
	return s
}'

# Interrupt and switch work: a sample whose stack has an interrupt entry,
# the softirq/exit work after one, or a context switch was taken while the
# workload's CPU served an interrupt (a timer, a reschedule IPI) or
# switched tasks, not running the workload's code.  That is where a
# profiler's own activity (its ticks, its reader's wake-ups, which preempt
# the workload) shows in a profile: the flat profiles are compared without
# it, and its share is printed apart.
IRQ_RE='^(asm_sysvec_|asm_common_interrupt|sysvec_|handle_softirqs|__do_softirq|irq_exit|__irq_exit_rcu|__schedule|finish_task_switch)'

# perf_flat DATA COMM: "class function samples" lines, class "own" or
# "irq": the self (flat) profile of COMM in DATA per function (the leaf of
# each perf script call chain, as perf report --no-children --sort sym).
perf_flat() {
	"$PERF" script -i "$1" --kallsyms /proc/kallsyms --comm "$2" -F ip,sym 2>/dev/null |
		awk -v irq="$IRQ_RE" "$NORM_AWK"'
	function flush() {
		if (n) n_[(isirq ? "irq " : "own ") leaf]++
		n = 0; isirq = 0
	}
	NF == 0 { flush(); next }
	{
		name = $2
		for (i = 3; i <= NF; i++) name = name " " $i
		name = norm(name)
		if (!n++) leaf = name
		if (name ~ irq) isirq = 1
	}
	END { flush(); for (k in n_) print k, n_[k] }'
}

# cprof_flat FOLDED COMM: the same from cprof-dump -f folded.
cprof_flat() {
	awk -v comm="$2" -v irq="$IRQ_RE" "$NORM_AWK"'
	{
		cnt = $NF
		stack = substr($0, 1, length($0) - length(cnt) - 1)
		nf = split(stack, fr, ";")
		if (fr[1] != comm || nf < 2) next
		isirq = 0
		for (i = 2; i <= nf; i++) if (norm(fr[i]) ~ irq) isirq = 1
		n[(isirq ? "irq " : "own ") norm(fr[nf])] += cnt
	}
	END { for (f in n) print f, n[f] }' "$1"
}

# flat_own LIST: "function samples" of the class own; irq_share LIST: "irq
# all" sample counts.
flat_own() {
	awk '$1 == "own" { sub(/^own /, ""); print }' "$1"
}
irq_share() {
	awk '{ all += $NF; if ($1 == "irq") irq += $NF } END { print irq + 0, all + 0 }' "$1"
}

# flat_compare NAME PERF CPROF: PERF and CPROF are "function samples" lists;
# prints both self shares side by side (functions at 2% or more in either;
# the rest lumped as [other]) and sets FLAT_L1 (the L1 distance of the two
# share vectors, in points, rounded up), FLAT_NA and FLAT_NB (the samples of
# each).
flat_compare() {
	local name=$1 out
	out=$(awk '
	{
		cnt = $NF
		f = substr($0, 1, length($0) - length(cnt) - 1)
		if (FNR == NR) { A[f] += cnt; ta += cnt } else { B[f] += cnt; tb += cnt }
		all[f] = 1
	}
	END {
		if (!ta || !tb) { print "L1", 200, ta + 0, tb + 0; exit }
		for (f in all) {
			pa = A[f] / ta; pb = B[f] / tb
			if (pa < 0.02 && pb < 0.02) { oa += pa; ob += pb; continue }
			printf "  %7.2f%% %7.2f%%  %s\n", 100 * pa, 100 * pb, f | "sort -rn"
			l1 += (pa > pb ? pa - pb : pb - pa)
		}
		close("sort -rn")
		printf "  %7.2f%% %7.2f%%  %s\n", 100 * oa, 100 * ob, "[other: each < 2%]"
		l1 += (oa > ob ? oa - ob : ob - oa)
		print "L1", int(100 * l1 + 0.999), ta, tb
	}' "$2" "$3")
	echo "$name, self share per function:"
	echo "     perf   cprof  function"
	grep -v '^L1 ' <<<"$out"
	read -r _ FLAT_L1 FLAT_NA FLAT_NB < <(grep '^L1 ' <<<"$out")
	echo "  L1 distance $FLAT_L1 points; $FLAT_NA perf samples, $FLAT_NB cprof samples"
}

# perf_both_share DATA COMM: "kernel both" - COMM's kernel-mode samples in
# DATA (leaf frame in the kernel) and how many of them also have user frames.
perf_both_share() {
	"$PERF" script -i "$1" --kallsyms /proc/kallsyms --comm "$2" -F ip,dso 2>/dev/null | awk '
	function flush() {
		if (n && k1) { kern++; if (u) both++ }
		n = 0; k1 = 0; u = 0
	}
	NF == 0 { flush(); next }
	{
		n++
		isk = (length($1) == 16 && $1 ~ /^ffff/)	# a kernel address
		if (n == 1) k1 = isk
		else if (!isk) u = 1
	}
	END { flush(); print kern + 0, both + 0 }'
}

# cprof_both_share FOLDED COMM: the same from cprof-dump -f folded (kernel
# frames end in _[k]).
cprof_both_share() {
	awk -v comm="$2" '
	{
		cnt = $NF
		stack = substr($0, 1, length($0) - length(cnt) - 1)
		nf = split(stack, fr, ";")
		if (fr[1] != comm || nf < 2 || fr[nf] !~ /_\[k\]$/) next
		kern += cnt
		for (i = 2; i < nf; i++) if (fr[i] !~ /_\[k\]$/) { both += cnt; break }
	}
	END { print kern + 0, both + 0 }' "$1"
}
