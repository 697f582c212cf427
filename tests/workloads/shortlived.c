// SPDX-License-Identifier: GPL-2.0
/*
 * shortlived [SECONDS]: spin for SECONDS (default 0.3) of CPU time in
 * shortlived_spin() and exit, so a profile holds samples of a process that
 * is gone by the time they are symbolized.  Prints its pid first.  CPU time,
 * not wall time: on a busy emulated host a wall-clock spin can get the CPU
 * for a fraction of its time, and its samples with it.  (At most 20 times
 * SECONDS of wall time all the same.)
 */
#include <unistd.h>

#include "common.h"

static volatile unsigned long sink;

NOINLINE void shortlived_spin(double seconds)
{
	double cpu_end = cpu_sec() + seconds, wall_end = now_sec() + 20 * seconds;

	while (cpu_sec() < cpu_end && now_sec() < wall_end)
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
