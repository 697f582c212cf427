#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# k_memory: what the module holds.  Idle: no buffer.  Profiling: one
# buffer_kb ring per selected online CPU (/proc/vmallocinfo agrees with
# stats' buffer_bytes), freed when the profile ends.  With buffer_kb times
# the CPUs over buffers_mb, every ring is made smaller to fit.
# vm-kernels: 6.1 6.12-rt
# vm-timeout: 90
set -euo pipefail
# shellcheck source=../lib/kprof.sh
. "$REPO/tests/vm/lib/kprof.sh"

# vmalloc'd bytes whose caller is in cprof (the rings; not module text)
cprof_vmalloc() {
	awk '/\[cprof\]/ { n += $2 } END { print n + 0 }' /proc/vmallocinfo
}

cpus=$(nproc)
kload
idle=$(cprof_vmalloc)
idle_stats=$(stat_of buffer_bytes)
ctl seconds=30
reader_start "$OUT/p.raw"
prof=$(cprof_vmalloc)
prof_stats=$(stat_of buffer_bytes)
reader_stop
after=$(cprof_vmalloc)
after_stats=$(stat_of buffer_bytes)
echo "buffer_kb=1024, $cpus CPUs: idle $idle bytes vmalloc'd ($idle_stats in stats);" \
	"profiling $prof ($prof_stats); after $after ($after_stats)"
((idle == 0 && idle_stats == 0)) || fail "the idle module holds $idle bytes of buffers"
((prof_stats == cpus * 1024 * 1024)) || fail "profiling: $prof_stats buffer bytes, want 1 MiB x $cpus CPUs"
# vmalloc areas carry a guard page each
((prof >= prof_stats && prof <= prof_stats + cpus * 8192)) || fail "vmallocinfo says $prof, stats $prof_stats"
((after == 0 && after_stats == 0)) || fail "$after bytes still held after the profile"
rmmod cprof

kload buffer_kb=4096 buffers_mb=4
reader_start "$OUT/q.raw"
capped=$(stat_of buffer_bytes)
reader_stop
echo "buffer_kb=4096 buffers_mb=4, $cpus CPUs: $capped buffer bytes while profiling"
((capped <= 4 << 20 && capped >= 2 << 20)) || fail "the cap did not hold: $capped bytes"
"$WORKLOADS/streamtext" <"$OUT/q.raw" >/dev/null || fail "the capped profile's stream is malformed"
echo "k_memory: ok"
