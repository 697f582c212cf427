# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Sums over folded stacks ("comm;root;...;leaf count", cprof-dump -f folded
# and bcc's -f alike) and the arithmetic the off-CPU tests check them with
# (u_offcpu, p_offcpu).

# us FILE COMM REGEX: the counts (microseconds, off the CPU) of COMM's
# stacks in FILE matching REGEX
us() {
	awk -v comm="$2" -v re="$3" '{
		c = $NF; s = substr($0, 1, length($0) - length(c) - 1)
		split(s, f, ";")
		if (f[1] == comm && s ~ re) t += c
	} END { print t + 0 }' "$1"
}
# pct A B: A as a percentage of B, one decimal
pct() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b ? 100 * a / b : 0 }'; }
# within V WANT D: is V within D of WANT?
within() { awk -v v="$1" -v want="$2" -v d="$3" 'BEGIN { exit !(v >= want - d && v <= want + d) }'; }
