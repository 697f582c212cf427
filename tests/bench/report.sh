#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tests/bench/report.sh RESULTS...: the tables of docs/BENCHMARKS.md
# ("cprof against perf") from the results files that tests/vm/tests/b_perf.sh
# leaves (build/vm-results/KVER/b_perf/results), one column block per
# kernel, and the targets met or missed.
set -euo pipefail

[[ $# -gt 0 ]] || {
	echo "usage: $0 build/vm-results/*/b_perf/results" >&2
	exit 2
}
for f in "$@"; do
	[[ -r $f ]] || {
		echo "report.sh: cannot read $f" >&2
		exit 1
	}
done

awk '
function v(k,   x) { x = R[file, k]; return x == "" ? "?" : x }
function num(k) { return R[file, k] + 0 }
function ratio(a, b) { return (b + 0) ? sprintf("%.2f", a / b) : "?" }
function pctover(x, base) { return (base + 0) ? sprintf("%+.0f%%", 100 * (x / base - 1)) : "?" }
function mark(ok) { return ok ? "met" : "**missed**" }
FNR == 1 { files[++nf] = FILENAME }
{ k = $1; $1 = ""; sub(/^ /, ""); R[FILENAME, k] = $0 }
END {
	for (i = 1; i <= nf; i++) {
		file = files[i]
		hi = v("high")
		printf "### %s (perf %s)\n\n", v("kernel"), v("perf")
		print "Handler cost per sample: duration of the hrtimer callback under"
		print "function_graph (us; the tracer adds its own, equal, cost to both)."
		print ""
		print "| f (Hz) | perf median | perf p90 | cprof median | cprof p90 | cprof/perf median | cprof/perf p90 | calls traced perf / cprof | cprof own mean, untraced |"
		print "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
		split("99 999 " hi, fs, " ")
		worst = 0
		for (j = 1; j <= 3; j++) {
			f = fs[j]
			r = (num("h_perf_med_" f)) ? num("h_cprof_med_" f) / num("h_perf_med_" f) : 99
			if (r > worst) worst = r
			printf "| %s | %s | %s | %s | %s | %s | %s | %s / %s | %.1f us |\n", f,
			    v("h_perf_med_" f), v("h_perf_p90_" f), v("h_cprof_med_" f), v("h_cprof_p90_" f),
			    ratio(num("h_cprof_med_" f), num("h_perf_med_" f)),
			    ratio(num("h_cprof_p90_" f), num("h_perf_p90_" f)),
			    v("h_perf_n_" f), v("h_cprof_n_" f), num("cprof_own_mean_ns_" f) / 1000
		}
		if (v("h_null_med_" fs[1]) != "?") {
			print ""
			print "The floor: nulltick_fn, an hrtimer callback at the same rate that only"
			print "re-arms (tests/bench/nulltick), under the same tracer; what each"
			print "profiler costs above it (median minus the median of the floor, us):"
			print ""
			print "| f (Hz) | floor median | floor p90 | perf above it | cprof above it | cprof/perf above the floor |"
			print "| ---: | ---: | ---: | ---: | ---: | ---: |"
			for (j = 1; j <= 3; j++) {
				f = fs[j]
				fl = num("h_null_med_" f)
				pa = num("h_perf_med_" f) - fl
				ca = num("h_cprof_med_" f) - fl
				printf "| %s | %s | %s | %.3f | %.3f | %s |\n", f, v("h_null_med_" f),
				    v("h_null_p90_" f), pa, ca, (pa > 0 ? sprintf("%.2f", ca / pa) : "?")
			}
		}
		print ""
		print "Job wall time (median of the interleaved runs, ms) and cprof during them:"
		print ""
		print "| f (Hz) | bare | perf running | cprof running | cprof ticks | cprof lost | cprof throttles |"
		print "| ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
		for (j = 1; j <= 3; j++) {
			f = fs[j]
			b = num("wall_bare_" f)
			printf "| %s | %s | %s (%s) | %s (%s) | %s | %s | %s |\n", f, v("wall_bare_" f),
			    v("wall_perf_" f), pctover(num("wall_perf_" f), b),
			    v("wall_cprof_" f), pctover(num("wall_cprof_" f), b),
			    v("cprof_ticks_" f), v("cprof_lost_" f), v("cprof_throttles_" f)
		}
		print ""
		printf "Highest rate: %s Hz (cprof delivered %s%% of the asked ticks in the calibration run).\n\n", hi, v("cal_" hi "_ticks_pct")
		print "| at the highest rate | perf | cprof | cprof vs perf |"
		print "| --- | ---: | ---: | ---: |"
		printf "| drops, live reader: raw copy to a file / cprof-dump -d | - | %s of %s / %s of %s lost | |\n",
		    v("drops_raw_lost"), v("drops_raw_samples"), v("drops_dump_lost"), v("drops_dump_samples")
		printf "| one capture, same job, both at once: samples | %s | %s | |\n", v("cap_perf_samples"), v("cap_cprof_samples")
		printf "| report: perf report --stdio / cprof-dump (symbolized pprof), median ms | %s | %s | %sx faster |\n",
		    v("t_perf_report_ms"), v("t_cprof_dump_ms"), ratio(num("t_perf_report_ms"), num("t_cprof_dump_ms"))
		printf "| capture bytes: perf.data / pprof (raw stream) | %s | %s (%s) | %s of perf.data |\n",
		    v("cap_perf_bytes"), v("cap_pprof_bytes"), v("cap_raw_bytes"),
		    (num("cap_perf_bytes") ? sprintf("1/%.1f", num("cap_perf_bytes") / num("cap_pprof_bytes")) : "?")
		printf "| perf record -a start-up (until its command starts), ms | %s | - | |\n", v("perf_startup_ms_cap")
		print ""
		print "Targets:"
		printf "- median handler cost <= 0.5x perf at equal f: worst %.2fx: %s\n", worst, mark(worst <= 0.5)
		d = num("drops_raw_lost") + num("drops_dump_lost")
		printf "- 0 drops at %s Hz with a live reader: %d: %s\n", hi, d, mark(d == 0 && v("drops_raw_lost") != "?")
		sp = num("t_cprof_dump_ms") ? num("t_perf_report_ms") / num("t_cprof_dump_ms") : 0
		printf "- cprof-dump >= 10x faster than perf report: %.1fx: %s\n", sp, mark(sp >= 10)
		sz = num("cap_pprof_bytes") ? num("cap_perf_bytes") / num("cap_pprof_bytes") : 0
		printf "- pprof <= 1/10 of perf.data: 1/%.1f: %s\n", sz, mark(sz >= 10)
		print ""
	}
}' "$@"
