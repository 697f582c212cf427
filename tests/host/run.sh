#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tests/host/run.sh: the host checks of what is not code: the man pages
# (check-man.sh), the documentation against the code (check-docs.sh), the
# version and the DKMS configuration (check-version.sh), the format as the
# module and userland build it (check-abi.sh), the benchmarks' summary
# table (check-benchsum.sh).  Builds
# userland/cprof-dump first (the checks ask it), runs every
# tests/host/check-*.sh through tests/unit/run-tests.sh and ends, as it
# does, with "N passed, N failed".
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$REPO"
make -s -C userland cprof-dump
names=()
for f in tests/host/check-*.sh; do
	names+=("$(basename "$f")")
done
exec tests/unit/run-tests.sh "host:$REPO/userland/cprof-dump:$REPO/tests/host" -- "${names[@]}"
