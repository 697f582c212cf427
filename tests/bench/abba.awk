# SPDX-License-Identifier: GPL-2.0
#
# abba.awk: the slowdown of rounds of a benchmark run in the order A B B A
# (A the job alone, B the job under a profiler): one round a line,
# "A1 B1 B2 A2" (times, any unit), blank lines and lines starting with #
# skipped.  Each round's ratio is (B1 + B2) / (A1 + A2): its runs were
# taken close together, so a host that drifts slower or faster moves both
# sides of it.  Printed, key value lines:
#   rounds N       the rounds read
#   ratios R,...   each round's ratio, in the order read
#   median R       their median (the mean of the middle two of an even N)
#   lo R, hi R     a 95 % bootstrap interval of the median: the 2.5th and
#                  97.5th percentiles of the medians of B resamples of N
#                  ratios drawn with replacement (B = 2000, or -v B=...),
#                  the generator seeded (-v SEED=..., default 1), so the
#                  same rounds give the same interval
# Nothing is printed but "rounds 0" when no round was read; a line that is
# not four positive numbers is an error (exit 1, a line on stderr).

function median(a, n,   s, i, j, t) {
	for (i = 1; i <= n; i++)
		s[i] = a[i]
	# insertion sort: n is a few dozen at most
	for (i = 2; i <= n; i++) {
		t = s[i]
		for (j = i - 1; j >= 1 && s[j] > t; j--)
			s[j + 1] = s[j]
		s[j + 1] = t
	}
	return n % 2 ? s[(n + 1) / 2] : (s[n / 2] + s[n / 2 + 1]) / 2
}

BEGIN {
	if (B == "")
		B = 2000
	if (SEED == "")
		SEED = 1
	n = 0
	bad = 0
}

/^[[:space:]]*(#|$)/ { next }

{
	if (NF != 4 || $1 <= 0 || $2 <= 0 || $3 <= 0 || $4 <= 0 ||
	    $0 !~ /^[[:space:]]*[0-9.]+[[:space:]]+[0-9.]+[[:space:]]+[0-9.]+[[:space:]]+[0-9.]+[[:space:]]*$/) {
		printf "abba.awk: line %d: not four positive times: %s\n", NR, $0 > "/dev/stderr"
		bad = 1
		exit 1
	}
	r[++n] = ($2 + $3) / ($1 + $4)
}

END {
	if (bad)
		exit 1
	print "rounds " n
	if (!n)
		exit 0
	line = ""
	for (i = 1; i <= n; i++)
		line = line (i > 1 ? "," : "") sprintf("%.4f", r[i])
	print "ratios " line
	printf "median %.4f\n", median(r, n)
	srand(SEED)
	for (k = 1; k <= B; k++) {
		for (i = 1; i <= n; i++)
			d[i] = r[int(rand() * n) + 1]
		m[k] = median(d, n)
	}
	# the medians in order, then the percentiles (nearest rank)
	for (i = 2; i <= B; i++) {
		t = m[i]
		for (j = i - 1; j >= 1 && m[j] > t; j--)
			m[j + 1] = m[j]
		m[j + 1] = t
	}
	lo = int(B * 0.025 + 0.5); if (lo < 1) lo = 1
	hi = int(B * 0.975 + 0.5); if (hi > B) hi = B
	printf "lo %.4f\nhi %.4f\n", m[lo], m[hi]
}
