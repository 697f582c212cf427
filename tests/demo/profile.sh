#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tests/demo/profile.sh: the demo itself, run by tests/demo/run.sh either on
# this machine or in the test VM, with the VM test environment (CPROF_KO,
# CPROF_DUMP, WORKLOADS, OUT, KVER).  Loads cprof.ko, shows /proc/cprof/,
# profiles cpuburn for 5 s into OUT/cpu.pb.gz and prints its top functions.
set -euo pipefail

step() {
	printf '\n$ %s\n' "$*"
}

if grep -q '^cprof ' /proc/modules; then
	echo "demo: cprof is already loaded: unload it first (rmmod cprof)" >&2
	exit 1
fi
step insmod "${CPROF_KO#"$REPO"/}"
insmod "$CPROF_KO"
trap 'rmmod cprof 2>/dev/null || true' EXIT

step ls -l /proc/cprof/
ls -l /proc/cprof/
for f in ctl stats; do
	if [[ -r /proc/cprof/$f ]]; then
		step cat "/proc/cprof/$f"
		cat "/proc/cprof/$f"
	fi
done

if [[ ! -e /proc/cprof/profile ]]; then
	echo "demo: this cprof.ko has no /proc/cprof/profile yet: nothing to profile"
	exit 0
fi
if [[ ! -x $CPROF_DUMP ]]; then
	echo "demo: ${CPROF_DUMP#"$REPO"/} is not built: nothing to read the profile with" >&2
	exit 1
fi

# cpuburn outlives the profile: its start-up is slow under emulation.
step "${WORKLOADS#"$REPO"/}/cpuburn 10 &"
"$WORKLOADS/cpuburn" 10 &
burn=$!
sleep 1
step cprof-dump -d 5 -o cpu.pb.gz
"$CPROF_DUMP" -d 5 -o "$OUT/cpu.pb.gz"
ls -l "$OUT/cpu.pb.gz"
if command -v go >/dev/null; then
	step go tool pprof -top -nodecount=20 cpu.pb.gz
	HOME=${TMPDIR:-/tmp} go tool pprof -top -nodecount=20 -symbolize=none "$OUT/cpu.pb.gz"
fi
wait "$burn"

step cat /proc/cprof/stats
cat /proc/cprof/stats
