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
#include "common.h"

#define UNIT 20000	/* iterations per work unit: a few tens of microseconds */

static volatile unsigned long sink;

/*
 * A macro, not a function: the loop must be the leaf's own code so that
 * samples land in leafN itself (no extra frame, no inline frame).  The "+m"
 * puts x on the stack: GCC 12 sets up no frame pointer in a leaf function
 * that has no stack frame, even with -fno-omit-frame-pointer, and a
 * frame-pointer unwind from such a leaf would skip its caller b().
 */
#define SPIN(units)						\
	do {							\
		unsigned long n = (units) * UNIT, x = sink | 1;	\
		while (n--) {					\
			x ^= x << 13;				\
			x ^= x >> 7;				\
			x ^= x << 17;				\
			__asm__ volatile("" : "+r"(x));		\
		}						\
		__asm__ volatile("" : "+m"(x));		\
		sink += x;					\
	} while (0)

NOINLINE void leaf1(void)
{
	SPIN(1);
}

NOINLINE void leaf2(void)
{
	SPIN(2);
}

NOINLINE void leaf3(void)
{
	SPIN(4);
}

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
