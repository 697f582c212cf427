#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# hang.sh: what run.sh does with a guest that stops answering, shown on
# purpose (tests/README.md): the heartbeat guest.sh runs (the bash at
# SCHED_FIFO) is stopped, and CPU 0 stays in the kernel (reading
# /dev/zero).  run.sh should stop the VM after CPROF_VM_HANG seconds and
# fail this test, naming where CPU 0 was (read_zero or the clearing it
# calls), the console showing the backtrace the NMI left.  Not part of
# make check: run by its path.
# vm-timeout: 900
set -euo pipefail
hb=$(ps -eo pid=,cls=,comm= | awk '$2 == "FF" && $3 == "bash" { print $1; exit }')
[[ -n $hb ]] || { echo "hang.sh: FAIL: no heartbeat (a SCHED_FIFO bash) found"; exit 1; }
echo "heartbeat: pid $hb, stopped"
kill -STOP "$hb"
taskset -c 0 dd if=/dev/zero of=/dev/null bs=4M &
sleep 850
