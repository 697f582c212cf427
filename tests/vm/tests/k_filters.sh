#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# k_filters: the filters are applied in the kernel.
#   pid=P      only that process's samples;
#   cpus=0     only CPU 0 samples (CPU 1 is not even ticked);
#   mode=user  no kernel frames, user frames still taken for ticks that hit
#              the kernel; mode=kernel  no user frames;
#   idle=0     (default) no idle-task samples; idle=1 samples the idle task.
# vm-kernels: 6.12 6.1-rt
# vm-timeout: 150
set -euo pipefail
# shellcheck source=../lib/kprof.sh
. "$REPO/tests/vm/lib/kprof.sh"

kload
"$WORKLOADS/cpuburn" 300 >/dev/null &
burn=$!
"$WORKLOADS/readzero" 300 >/dev/null &
rz=$!

ctl freq=499 seconds=2 "pid=$rz"
profile "$OUT/pid.raw"
read -r n other < <(rawk -v p="$rz" '$1 == "S" { n++; if ($S_pid != p) o++ } END { print n + 0, o + 0 }' "$OUT/pid.raw.txt")
echo "pid=$rz: $n samples, $other of other processes"
((n >= 200 && other == 0)) || fail "pid filter: $n samples, $other from other processes"

ctl pid=0 cpus=0
ticks1=$(stat_of cpu1.ticks)
profile "$OUT/cpus.raw"
read -r n other < <(rawk '$1 == "S" { n++; if ($S_cpu != 0) o++ } END { print n + 0, o + 0 }' "$OUT/cpus.raw.txt")
echo "cpus=0: $n samples, $other on other CPUs, cpu1 ticks +$(($(stat_of cpu1.ticks) - ticks1))"
((n >= 200 && other == 0)) || fail "cpus filter: $n samples, $other on other CPUs"
(($(stat_of cpu1.ticks) == ticks1)) || fail "cpu1 was ticked with cpus=0"

ctl cpus=all mode=user
profile "$OUT/user.raw"
read -r n kf rzu < <(rawk -v p="$rz" '$1 == "S" { n++; if ($S_nr_kernel) k++; if ($S_pid == p && $S_flags % 2 == 0 && $S_nr_user >= 2) u++ } END { print n + 0, k + 0, u + 0 }' "$OUT/user.raw.txt")
echo "mode=user: $n samples, $kf with kernel frames, $rzu readzero in-kernel ticks with user stacks"
((n >= 200 && kf == 0 && rzu >= 50)) || fail "mode=user: $kf samples with kernel frames, $rzu user stacks from syscalls"

ctl mode=kernel
profile "$OUT/kernel.raw"
read -r n uf kk < <(rawk '$1 == "S" { n++; if ($S_nr_user) u++; if ($S_nr_kernel) k++ } END { print n + 0, u + 0, k + 0 }' "$OUT/kernel.raw.txt")
echo "mode=kernel: $n samples, $uf with user frames, $kk with kernel frames"
((n >= 200 && uf == 0 && kk >= 50)) || fail "mode=kernel: $uf samples with user frames"

kill "$burn" "$rz" 2>/dev/null || true
wait || true
ctl mode=both idle=0
profile "$OUT/noidle.raw"
idle=$(rawk '$1 == "S" && (int($S_flags / 32) % 2 || $S_pid == 0)' "$OUT/noidle.raw.txt" | wc -l)
((idle == 0)) || fail "idle=0: $idle idle samples"
ctl idle=1
profile "$OUT/idle.raw"
read -r n idle < <(rawk '$1 == "S" { n++; if (int($S_flags / 32) % 2 && $S_pid == 0) i++ } END { print n + 0, i + 0 }' "$OUT/idle.raw.txt")
echo "idle=1 on an idle machine: $idle of $n samples from the idle task"
((idle * 2 >= n && idle >= 200)) || fail "idle=1: only $idle of $n samples idle"
echo "k_filters: ok"
