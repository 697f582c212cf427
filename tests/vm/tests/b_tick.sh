#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# b_tick: b_perf's callbacks alone: cprof_tick, perf_swevent_hrtimer and
# the floor (nulltick_fn) traced at 999 Hz while the job runs, HREPS
# rounds, with none of b_perf's timed runs, calibration, drops or
# capture.  Its results are b_perf's keys (tests/bench/summary.sh reads
# them as b_perf's): the summary's tick row in minutes under -icount,
# where the whole of b_perf takes most of an hour.  Skipped when b_perf
# runs in the same boot (make bench's default): it measures the same.
# vm-timeout: 1500
set -euo pipefail
# shellcheck source=../lib/assert.sh
. "$REPO/tests/vm/lib/assert.sh"
! awk '$1 == "b_perf" { f = 1 } END { exit !f }' "${OUT%/*}/plan" ||
	skip "b_perf runs in this boot and measures the callbacks"
B_PERF_TICKS=999 exec "$REPO/tests/vm/tests/b_perf.sh"
