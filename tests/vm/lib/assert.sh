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

# runs_on KERNEL...: skip unless the guest runs one of the kernels named
# (6.1, 6.12, 6.1-rt, 6.12-rt).  A debug kernel (make check-debug) runs
# every test that names none of its own.  make check pairs the kernels
# so that each test meets both series and both preemption models: 6.1
# with 6.12-rt, or 6.12 with 6.1-rt (tests/README.md).
runs_on() {
	local k=${KVER:-$(uname -r)} name
	case $k in
	*-cprof-debug) return 0 ;;
	6.1.*-rt-*) name=6.1-rt ;;
	6.12.*-rt-*) name=6.12-rt ;;
	6.1.*) name=6.1 ;;
	6.12.*) name=6.12 ;;
	*) name=$k ;;
	esac
	[[ " $* " == *" $name "* ]] && return 0
	local all=("$@") last others
	last=${all[-1]}
	unset 'all[-1]'
	others=${all[*]}
	skip "runs on ${others:+${others// /, } and }$last only"
}
