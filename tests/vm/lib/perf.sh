#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tests/vm/lib/perf.sh ARGS...: perf for the VM tests.
#
# perf walks /lib/modules/KVER/kernel to map module names to files; over
# 9p under TCG that walk alone takes tens of seconds.  Run perf in a private
# mount namespace with an empty tmpfs there: module symbols still come from
# /proc/kallsyms.  When that directory is already hidden (perf_find in
# lib/perfcmp.sh hides it for a whole test, so that perf and what it
# profiles share one mount namespace), run perf as it is.
set -euo pipefail

moddir=/lib/modules/$(uname -r)/kernel
if [[ $(stat -f -c %T "$moddir" 2>/dev/null) == tmpfs ]]; then
	exec perf "$@"
fi
# shellcheck disable=SC2016 # expanded by the inner bash
exec unshare --mount --propagation private -- /bin/bash -c '
	mount -t tmpfs -o ro,mode=0755 cprof-empty "$0" && exec perf "$@"
' "$moddir" "$@"
