/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The work of cpuburn's call graph, shared by the programs that burn in
 * it (cpuburn, fpburn, tests/bench/spin): leaf1, leaf2 and leaf3 spin 1, 2
 * and 4 units.  Each program is one translation unit and includes this
 * once; it defines b() and what calls it.
 */
#ifndef WORKLOAD_BURN_H
#define WORKLOAD_BURN_H

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

#endif /* WORKLOAD_BURN_H */
