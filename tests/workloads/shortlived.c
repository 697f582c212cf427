// SPDX-License-Identifier: GPL-2.0
/*
 * shortlived [SECONDS]: spin for SECONDS (default 0.3) in shortlived_spin()
 * and exit, so a profile holds samples of a process that is gone by the
 * time they are symbolized.  Prints its pid first.
 */
#include <unistd.h>

#include "common.h"

static volatile unsigned long sink;

NOINLINE void shortlived_spin(double seconds)
{
	double end = now_sec() + seconds;

	while (now_sec() < end)
		for (int i = 0; i < 10000; i++)
			sink += i;
}

int main(int argc, char **argv)
{
	double seconds = parse_seconds(argc, argv, 0.3);

	printf("shortlived: pid %d\n", (int)getpid());
	fflush(stdout);
	shortlived_spin(seconds);
	return 0;
}
