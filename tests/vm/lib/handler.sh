# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Timing a sampling handler (cprof_tick, perf_swevent_hrtimer) with
# ftrace's function_graph tracer, for the benchmarks (b_unwind, b_python):
#   handler_setup DIR   mount tracefs if needed, a 16 MiB trace buffer;
#                       durations are kept in DIR
#   trace_on FUNC       start timing FUNC
#   trace_off NAME      stop; FUNC's durations (us) added to DIR/NAME.us;
#                       prints the median and p90 of all of NAME's runs
#   handler_cleanup     tracing off, the nop tracer (for an EXIT trap)

T=/sys/kernel/tracing
HANDLER_DIR=

handler_setup() {
	HANDLER_DIR=$1
	[[ -e $T/trace ]] || mount -t tracefs tracefs "$T" || fail "no tracefs at $T"
	echo 16384 >"$T/buffer_size_kb"
}

trace_on() { # FUNC
	echo 0 >"$T/tracing_on"
	echo "$1" >"$T/set_ftrace_filter"
	echo function_graph >"$T/current_tracer"
	echo >"$T/trace"
	echo 1 >"$T/tracing_on"
}

trace_off() { # NAME
	echo 0 >"$T/tracing_on"
	awk '/\|/ { for (i = 2; i <= NF; i++) if ($i == "us") { print $(i - 1); break } }' \
		"$T/trace" >>"$HANDLER_DIR/$1.us"
	echo nop >"$T/current_tracer"
	echo >"$T/set_ftrace_filter"
	sort -n "$HANDLER_DIR/$1.us" | awk '{ v[NR] = $1 } END { if (!NR) { print "nan nan"; exit }
		m = int((NR + 1) / 2); p = int(NR * 0.9 + 0.999999); print v[m], v[p] }'
}

handler_cleanup() {
	[[ -w $T/tracing_on ]] || return 0
	echo 0 >"$T/tracing_on"
	echo nop >"$T/current_tracer"
}
