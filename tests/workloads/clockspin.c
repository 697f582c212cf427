// SPDX-License-Identifier: GPL-2.0
/*
 * clockspin [SECONDS]: spend SECONDS (default 5) reading the clock, almost
 * all of it inside the vDSO's clock_gettime(), called from read_clock(),
 * called from main(), in code built without frame pointers.  A sample in
 * the vDSO reaches main only through the vDSO's unwind table: its
 * frameless code leaves rbp to a caller that keeps none.  Prints how many
 * times it read the clock.
 */
#include "common.h"

NOINLINE static unsigned long read_clock(double seconds)
{
	struct timespec ts;
	unsigned long n = 0;
	double end = now_sec() + seconds;

	do {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		n++;
	} while (ts.tv_sec + ts.tv_nsec / 1e9 < end);
	return n;
}

int main(int argc, char **argv)
{
	printf("%lu\n", read_clock(parse_seconds(argc, argv, 5)));
	return 0;
}
