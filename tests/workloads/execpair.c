// SPDX-License-Identifier: GPL-2.0
/*
 * exec_first SECONDS PATH / exec_second SECONDS: one source built twice
 * (-DEXEC_SECOND for the second), both without PIE, so that each one's
 * spin function sits at the same address (0x401000 and up) under another
 * name.  exec_first spins in first_spin() for SECONDS of CPU time, then
 * execs PATH (exec_second) with SECONDS, which spins in second_spin(): a
 * profile must resolve every sample of the one pid to the binary that ran
 * it at that time.
 */
#include <unistd.h>

#include "common.h"

static volatile unsigned long sink;

#ifdef EXEC_SECOND
#define SPIN second_spin
#else
#define SPIN first_spin
#endif

NOINLINE void SPIN(double seconds)
{
	double cpu_end = cpu_sec() + seconds, wall_end = now_sec() + 20 * seconds;

	while (cpu_sec() < cpu_end && now_sec() < wall_end)
		for (int i = 0; i < 10000; i++)
			sink += i;
}

int main(int argc, char **argv)
{
	double seconds = parse_seconds(argc, argv, 1);

	SPIN(seconds);
#ifndef EXEC_SECOND
	if (argc > 2) {
		execl(argv[2], argv[2], argv[1], (char *)NULL);
		perror(argv[2]);
		return 1;
	}
#endif
	return 0;
}
