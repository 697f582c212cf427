#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# k_ktap: the module's units tested in the kernel.  cprof_ktap.ko (kmod/tests/,
# built next to cprof.ko from the same sources) runs its suites when loaded
# (ctl's settings, the unwind tables' checks, the record ring) and prints
# their results to the kernel log in KTAP version 1; this reads them: every
# suite planned must report, every case must pass, and a failing one is
# named with its reason.  The KTAP is copied to this test's log.
# vm-timeout: 60
set -euo pipefail
# shellcheck source=../lib/assert.sh
. "$REPO/tests/vm/lib/assert.sh"

ko=${CPROF_KO%/*}/cprof_ktap.ko
[[ -f $ko ]] || fail "$ko: not built (make module CPROF_KTAP=m builds it)"
insmod "$ko" || fail "insmod $ko failed"
rmmod cprof_ktap || fail "rmmod cprof_ktap failed"

# The kernel log from the last top-level "KTAP version 1" on.
dmesg --notime | awk '/^KTAP version 1$/ { n = 0; seen = 1 }
	seen { l[n++] = $0 }
	END { for (i = 0; i < n; i++) print l[i] }' >"$OUT/ktap"
cat "$OUT/ktap"
[[ -s $OUT/ktap ]] || fail "no KTAP in the kernel log"

# Each suite a subtest (its lines indented by 4): its plan, then its cases
# numbered from 1, then its result line at the top level.
awk '
	function fin(msg) { print "k_ktap: " msg; bad = 1 }
	/^1\.\.[0-9]+$/ { plan = substr($0, 4) + 0; next }
	/^    # Subtest: / { suite = $3; subplan = -1; n = 0; nbad = 0; next }
	/^    1\.\.[0-9]+$/ { subplan = substr($0, 8) + 0; next }
	/^    (not )?ok [0-9]+ / {
		n++
		num = /^    not / ? $3 : $2
		if (num != n) fin(suite ": case " num " where " n " was due")
		if (/^    not /) { nbad++; fin(suite ": FAIL " substr($0, 5)) }
		next
	}
	/^(not )?ok [0-9]+ / {
		top++
		if (n != subplan) fin(suite ": " n " cases of " subplan " planned")
		if (/^not /) fin("FAIL " $0)
		print "k_ktap: " suite ": " n - nbad " passed, " nbad " failed"
		cases += n
		next
	}
	END {
		if (!plan || top != plan) fin(top + 0 " suites of " plan + 0 " planned")
		if (!bad) print "k_ktap: " cases " cases in " top " suites passed"
		exit bad
	}' "$OUT/ktap" || fail "cprof_ktap.ko: a case failed (its KTAP above)"
