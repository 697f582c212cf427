// SPDX-License-Identifier: GPL-2.0
/*
 * cpuburn [SECONDS]: burn one CPU for SECONDS (default 5) in a known call
 * graph, so that a profile can be checked against it:
 *
 *   main -> a -> b -> leaf1   1 part of the work
 *                  -> leaf2   2 parts
 *                  -> leaf3   4 parts
 *
 * Every function is NOINLINE and the work feeds a volatile sink, so -O2
 * keeps the frames and the loops.  Prints how many rounds it did.
 */
#include "burn.h"

NOINLINE void b(void)
{
	leaf1();
	leaf2();
	leaf3();
	/* Not a tail call: b() stays on the stack while leaf3() runs. */
	__asm__ volatile("" ::: "memory");
}

NOINLINE unsigned long a(double seconds)
{
	double end = now_sec() + seconds;
	unsigned long rounds = 0;

	do {
		b();
		rounds++;
	} while (now_sec() < end);
	return rounds;
}

int main(int argc, char **argv)
{
	double seconds = parse_seconds(argc, argv, 5);
	unsigned long rounds = a(seconds);

	printf("cpuburn: %lu rounds of leaf1:leaf2:leaf3 = 1:2:4\n", rounds);
	return 0;
}
