#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# h_boot: the module built for this kernel loads, creates /proc/cprof
# readable by root only, and unloads clean, twice over.
set -euo pipefail

# shellcheck source=../lib/assert.sh
. "$REPO/tests/vm/lib/assert.sh"

[[ -f $CPROF_KO ]] || fail "no module at $CPROF_KO"
vermagic=$(modinfo -F vermagic "$CPROF_KO")
[[ $vermagic == "$KVER "* ]] || fail "$CPROF_KO is built for '$vermagic', this is $KVER"

for round in 1 2; do
	insmod "$CPROF_KO"
	grep -q '^cprof ' /proc/modules || fail "cprof not in /proc/modules after insmod"
	[[ -d /proc/cprof ]] || fail "no /proc/cprof after insmod"

	read -r mode uid gid < <(stat -c '%a %u %g' /proc/cprof)
	[[ $mode == 500 && $uid == 0 && $gid == 0 ]] ||
		fail "/proc/cprof is mode $mode owner $uid:$gid, want 500 root:root"
	while IFS= read -r -d '' f; do
		mode=$(stat -c '%a' "$f")
		(((8#$mode & 8#077) == 0)) || fail "$f is mode $mode: group/other have access"
	done < <(find /proc/cprof -mindepth 1 -print0)

	# Nobody but root gets in, whatever is inside.
	if setpriv --reuid=65534 --regid=65534 --clear-groups ls /proc/cprof >/dev/null 2>&1; then
		fail "an unprivileged user can list /proc/cprof"
	fi

	rmmod cprof
	! grep -q '^cprof ' /proc/modules || fail "cprof still loaded after rmmod (round $round)"
	[[ ! -e /proc/cprof ]] || fail "/proc/cprof left behind by rmmod (round $round)"
done
echo "h_boot: loaded and unloaded twice, /proc/cprof mode 0500 root:root"
