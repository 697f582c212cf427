#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tests/bench/summary.sh RESULTDIR...: one markdown table of the figures
# issue targets are set on, from the benchmarks that ran in each
# RESULTDIR (build/vm-results/KVER: vm.env and b_*/results, as
# tests/vm/run.sh and the b_*.sh tests leave them).  A row per figure and
# kernel: what was measured, the target, met or missed and by how much,
# and the run (commit, day, how the guest counted time).  Under -icount
# (ICOUNT= in vm.env) the guest's ns are 2^ICOUNT instructions, and costs
# are given in instructions.  A figure whose benchmark did not run in
# RESULTDIR gets no row.
set -euo pipefail

[[ $# -gt 0 ]] || {
	echo "usage: $0 build/vm-results/KVER..." >&2
	exit 2
}

# kv DIR KVER: "KVER<TAB>key<TAB>value" lines of everything the table reads
kv() {
	local d=$1 k=$2 b
	awk -v K="$k" -F= '$1 ~ /^(ICOUNT|COMMIT|DATE)$/ { printf "%s\tenv.%s\t%s\n", K, $1, $2 }' "$d/vm.env"
	# (b_tick is b_perf's callbacks alone, under b_perf's keys)
	for b in b_perf b_tick b_slowdown b_unwind b_python b_offcpu b_start b_dump b_threads b_soak; do
		[[ -r $d/$b/results ]] || continue
		awk -v K="$k" -v B="${b/#b_tick/b_perf}" '{ k = $1; $1 = ""; sub(/^ /, ""); printf "%s\t%s.%s\t%s\n", K, B, k, $0 }' "$d/$b/results"
	done
	# b_perf's job runs one by one ("bare|perf|cprof F REP ms"), and the
	# handler time of its cprof runs ("F REP ticks samples lost throttles ns")
	[[ ! -r $d/b_perf/runs ]] ||
		awk -v K="$k" 'NF == 4 { printf "%s\trun.%s.%s.%s\t%s\n", K, $1, $2, $3, $4 }' "$d/b_perf/runs"
	[[ ! -r $d/b_perf/t-dump ]] ||
		awk -v K="$k" '{ printf "%s\tt_dump.%d\t%s\n", K, NR, $1 }' "$d/b_perf/t-dump"
	[[ ! -r $d/b_perf/t-report ]] ||
		awk -v K="$k" '{ printf "%s\tt_report.%d\t%s\n", K, NR, $1 }' "$d/b_perf/t-report"
	[[ ! -r $d/b_perf/cprof-runs ]] ||
		awk -v K="$k" 'NF == 7 { printf "%s\ttickns.%s.%s\t%s\n", K, $1, $2, $7 }' "$d/b_perf/cprof-runs"
}

for d in "$@"; do
	[[ -r $d/vm.env ]] || {
		echo "summary.sh: $d: no vm.env (not a tests/vm/run.sh results folder)" >&2
		exit 1
	}
	kv "$d" "$(basename "$d")"
done | awk -F'\t' '
function has(k) { return ((K, k) in V) }
function v(k) { return has(k) ? V[K, k] : "" }
# a cost in the unit of the run: instructions under -icount, else us
function cost(us) {
	return icount ? sprintf("%d instr", us * 1000 / 2 ^ V[K, "env.ICOUNT"] + 0.5) : sprintf("%.3f us", us)
}
# a time in ms of the run: millions of instructions under -icount
function mcost(ms) {
	return icount ? sprintf("%.0f M instr", ms / 2 ^ V[K, "env.ICOUNT"]) : sprintf("%.0f ms", ms)
}
function x(r) { return sprintf("%.2fx", r) }
# at most: met, or missed by what factor
function atmost(r, t) { return r <= t ? "met" : sprintf("**missed** (%.1fx the target)", r / t) }
function atleast(r, t) { return r >= t ? "met" : sprintf("**missed** (%.1fx short)", t / r) }
# a row of figure number ORD: the rows of a figure go together, kernel
# after kernel
function row(ord, fig, meas, target, verdict) {
	ROWS[ord] = ROWS[ord] sprintf("| %s | %s | %s | %s | %s | %s |\n", fig, K, meas, target, verdict, run)
}
function pct(r) { return sprintf("%+.1f %%", 100 * (r - 1)) }
# b_perf job wall times at F Hz: median slowdown of TOOL against bare,
# the range over all pairs of runs, and the verdict against LIM (%)
function slowdown(f, tool, lim,   r, i, j, nb, nc, b, c, lo, hi, med, cm, bm, t, cell) {
	nb = nc = 0
	for (r = 1; has("run." tool "." f "." r) || has("run.bare." f "." r); r++) {
		if (has("run.bare." f "." r)) b[++nb] = v("run.bare." f "." r)
		if (has("run." tool "." f "." r)) c[++nc] = v("run." tool "." f "." r)
	}
	if (!nb || !nc || !has("b_perf.wall_bare_" f) || !has("b_perf.wall_" tool "_" f)) return ""
	lo = 1e30; hi = -1e30
	for (i = 1; i <= nb; i++)
		for (j = 1; j <= nc; j++) {
			t = c[j] / b[i]
			if (t < lo) lo = t
			if (t > hi) hi = t
		}
	med = v("b_perf.wall_" tool "_" f) / v("b_perf.wall_bare_" f)
	cell = sprintf("%s (pairs %s to %s; %d runs each)", pct(med), pct(lo), pct(hi), nb)
	SLO = lo; SHI = hi; SMED = med
	return cell
}
{ V[$1, $2] = $3; if (!($1 in seen)) { seen[$1] = 1; ks[++nk] = $1 } }
END {
	print "| figure | kernel | measured | target | verdict | run |"
	print "| --- | --- | --- | --- | --- | --- |"
	for (i = 1; i <= nk; i++) {
		K = ks[i]
		icount = v("env.ICOUNT") != ""
		run = sprintf("%s, %s, %s", has("env.COMMIT") ? v("env.COMMIT") : "?",
		    has("env.DATE") ? v("env.DATE") : "?",
		    icount ? "-icount shift=" v("env.ICOUNT") : has("env.ICOUNT") ? "wall clock" : "clock not recorded")
		# the floor: a callback that only reads the clock and re-arms,
		# traced as the others are (from b_perf, where it ran in this boot)
		fl = has("b_perf.h_null_med_999") ? v("b_perf.h_null_med_999") : ""
		# the tick on frame-pointer code, beside perf -g on the same job
		if (has("b_perf.h_cprof_med_999") && has("b_perf.h_perf_med_999")) {
			c = v("b_perf.h_cprof_med_999"); p = v("b_perf.h_perf_med_999")
			r = p ? c / p : 99
			why = ""
			if (r > 0.5 && fl != "" && p > fl && c > fl)
				why = sprintf(": both pay the floor (%s, %s of perf'"'"'s); above it %s against %s, %s",
				    cost(fl), x(fl / p), cost(c - fl), cost(p - fl), x((c - fl) / (p - fl)))
			row(1, "tick, FP code (b_perf spin, 999 Hz), per sample against perf -g",
			    sprintf("%s against %s (floor %s): %s", cost(c), cost(p), cost(fl), x(r)),
			    "<= 0.5x", atmost(r, 0.5) why)
		}
		# perf -g on the same code (perffp), else on qsortsplit (perfg)
		pk = has("b_unwind.perffp.median_us") ? "perffp" : "perfg"
		if (has("b_unwind.fptab.median_us") && has("b_unwind." pk ".median_us")) {
			c = v("b_unwind.fptab.median_us"); p = v("b_unwind." pk ".median_us")
			r = p ? c / p : 99
			why = ""
			if (r > 0.35 && has("b_unwind.fpfp.median_us") && p > 0) {
				f = v("b_unwind.fpfp.median_us")
				why = sprintf(": the frame-pointer walk alone (fpfp, no tables) costs %s, %s of perf'"'"'s", cost(f), x(f / p))
				if (c > f)
					why = why sprintf("; the tables add %s, their stacks going on below main (%d bytes a sample against %d)",
					    cost(c - f), v("b_unwind.fptab.bytes_per_sample"), v("b_unwind.fpfp.bytes_per_sample"))
				if (fl != "")
					why = why sprintf("; the floor alone is %s", x(fl / p))
			}
			row(2, "tick, FP code with tables (b_unwind fptab), per sample against perf -g" (pk == "perffp" ? " on the same code" : " on qsortsplit"),
			    sprintf("%s against %s: %s", cost(c), cost(p), x(r)), "<= 0.35x", atmost(r, 0.35) why)
		}
		if (has("b_unwind.table.median_us") && has("b_unwind.dwarf.median_us")) {
			c = v("b_unwind.table.median_us"); p = v("b_unwind.dwarf.median_us")
			r = p ? c / p : 99
			why = ""
			if (r > 0.1 && has("b_unwind.dwarf.report_ms") && has("b_unwind.table.report_ms"))
				why = sprintf(": perf'"'"'s sample copies the stack, perf report unwinds it (%s against cprof-dump'"'"'s %s on these captures)",
				    mcost(v("b_unwind.dwarf.report_ms")), mcost(v("b_unwind.table.report_ms")))
			if (r > 0.1 && fl != "" && p > 0)
				why = why sprintf("%s the floor alone is %s", why == "" ? ":" : ";", x(fl / p))
			row(3, "tick, tables on -O2 code (b_unwind table), per sample against perf dwarf",
			    sprintf("%s against %s: %s", cost(c), cost(p), x(r)), "<= 0.1x", atmost(r, 0.1) why)
		}
		# the tick reading the frames of CPython: no target, nothing to compare
		if (has("b_python.py.median_us") && has("b_python.nopy.median_us")) {
			c = v("b_python.py.median_us"); p = v("b_python.nopy.median_us")
			n = v("b_python.py.python_frames_per_sample")
			row(12, "tick with CPython'"'"'s frames (b_python py), against the same program without them (nopy)",
			    sprintf("%s against %s: %s%s for %.1f Python frames a sample%s", cost(c), cost(p),
			        c >= p ? "+" : "", cost(c - p), n, n > 0 ? sprintf(", %s a frame", cost((c - p) / n)) : ""), "-", "-")
		}
		# off-CPU: the time each round trip lost, per switch each recorded
		if (has("b_offcpu.rate_bcc") && v("b_offcpu.cprof_events") > 0 && v("b_offcpu.switches") > 0) {
			n = v("b_offcpu.rate_none")
			share = v("b_offcpu.cprof_events") / v("b_offcpu.switches")
			ce = (1 / v("b_offcpu.rate_cprof") - 1 / n) / (2 * share)
			be = (1 / v("b_offcpu.rate_bcc") - 1 / n) / 2
			r = be > 0 ? ce / be : 99
			why = ""
			# the module times each record itself (offcpu_ns_total)
			if (r > 0.5 && v("b_offcpu.cprof_offcpu_ns_total") > 0) {
				rec = v("b_offcpu.cprof_offcpu_ns_total") / v("b_offcpu.cprof_events") / 1e9
				why = sprintf(": recording itself, by the module'"'"'s clock, %s (%s of bcc'"'"'s whole event); the other %s: the probe on the switches not recorded, the tracepoint, the stream'"'"'s reader",
				    cost(rec * 1e6), x(rec / be), cost((ce - rec) * 1e6))
			}
			row(4, "off-CPU, per recorded switch against BCC offcputime (b_offcpu)",
			    sprintf("%s against %s (cprof recorded %.1f %% of switches): %s",
			        cost(ce * 1e6), cost(be * 1e6), 100 * share, x(r)),
			    "<= 0.5x", atmost(r, 0.5) why)
		}
		# job slowdown: a target at 99 Hz, none at 999 Hz; the ABBA
		# rounds of b_slowdown where it ran, else the runs of b_perf
		split("99 999", fs, " ")
		for (j = 1; j <= 2; j++) {
			f = fs[j]
			if (has("b_slowdown.cprof_" f "_median")) {
				p = "b_slowdown.cprof_" f "_"
				lo = v(p "lo"); hi = v(p "hi")
				cell = sprintf("%s (95 %% interval %s to %s, %d ABBA rounds); cprof-dump used %s of CPU a run (jobs of %s)",
				    pct(v(p "median")), pct(lo), pct(hi), v("b_slowdown.rounds"), mcost(v(p "cpu_ms")), mcost(v(p "job_ms")))
				p = "b_slowdown.perf_" f "_"
				if (has(p "median"))
					cell = cell sprintf("; perf record %s (%s to %s), %s of CPU a run",
					    pct(v(p "median")), pct(v(p "lo")), pct(v(p "hi")), mcost(v(p "cpu_ms")))
				# decided when the whole interval is on one side of 1 %
				if (f != 99)
					vd = "-"
				else if ((hi - 1) * 100 <= 1)
					vd = "met"
				else if ((lo - 1) * 100 > 1)
					vd = sprintf("**missed** (at least %.1f points over)", (lo - 1) * 100 - 1)
				else
					vd = "not decided: the interval holds the target"
				row(4 + j, sprintf("job slowdown at %s Hz (b_slowdown), cprof-dump -d against the bare job", f), cell,
				    f == 99 ? "<= 1 %" : "-", vd)
				continue
			}
			cell = slowdown(f, "cprof", 1)
			if (cell == "") continue
			lo = SLO; hi = SHI
			tk = ""
			if (has("tickns." f ".1") && has("b_perf.wall_bare_" f)) {
				s = 0
				for (r = 1; has("tickns." f "." r); r++) s += v("tickns." f "." r)
				tk = sprintf("; the ticks alone %.2f %%", 100 * s / (r - 1) / (v("b_perf.wall_bare_" f) * 1e6))
			}
			pc = slowdown(f, "perf", 1)
			if (pc != "") pc = sprintf("; perf record %s", pct(SMED))
			# met if every pair is within the target either way (a bare
			# run slower than the cprof run by more says the clock jumped),
			# missed if every pair is over it
			if (f != 99)
				vd = "-"
			else if ((hi - 1) * 100 <= 1 && (1 - lo) * 100 <= 1)
				vd = "met"
			else if ((lo - 1) * 100 > 1)
				vd = sprintf("**missed** (at least %.1f points over)", (lo - 1) * 100 - 1)
			else
				vd = "not decided: the pairs of runs span more than the target"
			row(4 + j, sprintf("job slowdown at %s Hz (b_perf), cprof against the bare job", f), cell tk pc,
			    f == 99 ? "<= 1 %" : "-", vd)
		}
		if (has("b_start.first_tick_cold_ms")) {
			c = v("b_start.first_tick_cold_ms") / 1000; w = v("b_start.first_tick_warm_ms") / 1000
			m = c > w ? c : w
			row(7, "first tick after cprof-dump -d starts (b_start, median of 5)",
			    sprintf("cold cache %.2f s, warm %.2f s", c, w), "<= 0.5 s", atmost(m, 0.5))
		}
		if (has("b_start.http_first_s")) {
			# seconds=2: the first request within N + 3 s, the next (symbols
			# and tables cached) within N + 1.5 s
			f = v("b_start.http_first_s"); n = v("b_start.http_next_median_s")
			m = f / 5 > n / 3.5 ? f / 5 : n / 3.5
			row(8, "/debug/pprof/profile?seconds=2 answered (b_start: the first request after the server started; the next 5, median)",
			    sprintf("first %.2f s, next %.2f s", f, n), "<= 5 s, <= 3.5 s", atmost(m, 1))
		}
		if (has("b_dump.t_report_ms") && v("b_dump.t_second_ms") > 0) {
			r = v("b_dump.t_report_ms") / v("b_dump.t_second_ms")
			row(9, "conversion against perf report --stdio (b_dump, ~40 000 samples, symbol cache warm)",
			    sprintf("perf report %d ms, cprof-dump %d ms: %.1fx faster", v("b_dump.t_report_ms"), v("b_dump.t_second_ms"), r),
			    ">= 10x", atleast(r, 10))
			if (v("b_dump.t_first_ms") > 0)
				row(9, "first conversion, symbol cache empty, against perf report --stdio (b_dump, the same captures)",
				    sprintf("perf report %d ms, cprof-dump %d ms: %.1fx faster", v("b_dump.t_report_ms"), v("b_dump.t_first_ms"),
				        v("b_dump.t_report_ms") / v("b_dump.t_first_ms")), "-", "-")
			if (v("b_dump.t_nosym_ms") > 0) {
				r = v("b_dump.t_second_ms") / v("b_dump.t_nosym_ms")
				row(9, "second conversion against --no-symbolize (b_dump, the same capture)",
				    sprintf("%d ms against %d ms: %.2fx", v("b_dump.t_second_ms"), v("b_dump.t_nosym_ms"), r),
				    "<= 1.5x", atmost(r, 1.5))
			}
		} else if (has("b_perf.t_perf_report_ms") && v("b_perf.t_cprof_dump_ms") > 0) {
			r = v("b_perf.t_perf_report_ms") / v("b_perf.t_cprof_dump_ms")
			reps = ""
			for (j = 1; has("t_dump." j) && has("t_report." j); j++)
				reps = reps sprintf("%s%.2fx", j > 1 ? ", " : "; each run: ", v("t_report." j) / (v("t_dump." j) ? v("t_dump." j) : 1))
			row(9, sprintf("conversion against perf report --stdio (b_perf, %d samples, median of 3)", v("b_perf.cap_cprof_samples")),
			    sprintf("perf report %d ms, cprof-dump %d ms: %.2fx faster%s", v("b_perf.t_perf_report_ms"), v("b_perf.t_cprof_dump_ms"), r, reps),
			    ">= 10x", atleast(r, 10))
		}
		if (has("b_threads.threads") && has("b_threads.pass_ms")) {
			n = v("b_threads.threads")
			row(10, "snapshot of every thread (b_threads: 10 000 parked threads and the rest)",
			    sprintf("%d threads in %s (the module'"'"'s pass); stream %.1f MB, %d bytes a thread; cprof-dump'"'"'s largest RSS %.1f MB",
			        n, mcost(v("b_threads.pass_ms")), v("b_threads.stream_bytes") / 1e6,
			        v("b_threads.stream_bytes") / (n ? n : 1), v("b_threads.rss_kb") / 1024), "-", "-")
		}
		if (has("b_soak.samples") && v("b_soak.samples") > 0) {
			r = v("b_soak.late") / v("b_soak.samples")
			m = has("b_soak.rss3_kb") ? sprintf("; RSS %d kB at minute 3, %d at the end, at most %d", v("b_soak.rss3_kb"), v("b_soak.rss_end_kb"), v("b_soak.rss_max_kb")) : ""
			row(11, sprintf("samples outside their window (b_soak: --every 1 for %d min)", v("b_soak.minutes")),
			    sprintf("%d of %d (%.2f %%), %d windows%s", v("b_soak.late"), v("b_soak.samples"), 100 * r, v("b_soak.windows"), m),
			    "<= 1 %", atmost(100 * r, 1))
		}
	}
	split("1 2 3 12 4 5 6 7 8 9 10 11", order, " ")
	for (o = 1; o <= 12; o++) printf "%s", ROWS[order[o]]
}'
