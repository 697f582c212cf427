#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# z_lockdown: under lockdown (confidentiality) nobody may profile, root
# with every capability included: opening profile, stats, ctl (to read or
# write) or unwind fails with EPERM.  Lockdown cannot be lifted until the next
# boot, so this test runs last (z_).
# vm-timeout: 60
set -euo pipefail
# shellcheck source=../lib/kprof.sh
. "$REPO/tests/vm/lib/kprof.sh"

sec=/sys/kernel/security
[[ -f $sec/lockdown ]] || mount -t securityfs securityfs "$sec" 2>/dev/null || true
if [[ ! -w $sec/lockdown ]]; then
	echo "this kernel has no lockdown LSM"
	exit 77
fi
kload
cat /proc/cprof/stats >/dev/null || fail "stats refused before lockdown"
echo confidentiality >"$sec/lockdown"
echo "lockdown: $(<"$sec/lockdown")"
for f in profile stats ctl unwind; do
	if out=$(cat "/proc/cprof/$f" 2>&1 >/dev/null); then
		fail "$f could be read under lockdown"
	fi
	[[ $out == *"Operation not permitted"* ]] || fail "$f under lockdown: $out"
done
if out=$(sh -c 'echo freq=5 >/proc/cprof/ctl' 2>&1); then
	fail "ctl could be written under lockdown"
fi
[[ $out == *"Operation not permitted"* ]] || fail "ctl under lockdown: $out"
echo "profile, stats, ctl and unwind refused with EPERM under lockdown"
echo "z_lockdown: ok"
