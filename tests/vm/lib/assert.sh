# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# The assertions every VM test ends with, sourced by the other libraries
# (kprof.sh, perfcmp.sh) and by tests that use none of them.  A test
# fails with one line naming itself and exit status 1, or is skipped with
# exit status 77, which tests/vm/run.sh counts as skipped.

fail() {
	echo "${0##*/}: FAIL: $*" >&2
	exit 1
}

skip() {
	echo "${0##*/}: SKIP: $*"
	exit 77
}
