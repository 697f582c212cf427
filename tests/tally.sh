# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# tests/tally.sh: sourced by tests/check.sh and tests/test.sh to add up
# what each runner they call counted.  Every runner ends with a line
# "N passed, N failed" (perhaps with a "name: " before it, perhaps a
# ", N skipped" after); tally adds the last such line of a runner's log.
# The caller sets $logs (tally.log goes there).

passed=0
failed=0
skipped=0

# counts LOG: the last "N passed, N failed" of LOG as "N N", and a
# "N skipped" line's N (0 if none) as a third number.
counts() {
	local p f s
	read -r p f < <(sed -n 's/^\([A-Za-z_-]*: \)\{0,1\}\([0-9][0-9]*\) passed, \([0-9][0-9]*\) failed.*$/\2 \3/p' "$1" | tail -n 1) || return 1
	s=$(sed -n 's/^\([0-9][0-9]*\) \(test binaries \)\{0,1\}skipped$/\1/p; s/^.* passed, .* failed, \([0-9][0-9]*\) skipped$/\1/p' "$1" | tail -n 1)
	echo "$p $f ${s:-0}"
}

# tally NAME RC LOG: add LOG's counts; a runner that failed without saying
# so, or said nothing, counts as one failure.
tally() {
	local name=$1 rc=$2 log=$3 p f s
	if ! read -r p f s < <(counts "$log"); then
		echo "$name printed no counts (exit status $rc): 1 failure" | tee -a "${logs:?}/tally.log"
		failed=$((failed + 1))
		return 0
	fi
	passed=$((passed + p))
	failed=$((failed + f))
	skipped=$((skipped + s))
	if [[ $rc -ne 0 && $f -eq 0 ]]; then
		echo "$name exited with $rc but counted no failure: 1 failure" | tee -a "${logs:?}/tally.log"
		failed=$((failed + 1))
	fi
}

# totals: the closing lines; exit status 0 only if nothing failed.
totals() {
	echo "$skipped skipped"
	echo "$passed passed, $failed failed"
	[[ $failed -eq 0 ]]
}
