#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# b_threads: u_threads with 10 000 parked threads (make check's u_threads
# parks 2 000): every u_threads assertion at that size, and its figures,
# the time the pass took (the END record's), the stream's bytes a thread
# and cprof-dump's largest resident size, for docs/BENCHMARKS.md ("A
# snapshot of every thread").
# vm-kernels: 6.1 6.12
# vm-timeout: 400
set -euo pipefail
U_THREADS_N=10000 exec "$REPO/tests/vm/tests/u_threads.sh"
